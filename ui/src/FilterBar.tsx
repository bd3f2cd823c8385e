import { Button, Checkbox, TextField } from "@radix-ui/themes";
import { memo, useMemo } from "react";
import { COLUMNS } from "./board";
import { NO_FILTER, choices, countText, isActive, type BoardFilter } from "./filters";
import type { TaskStatus, TaskView } from "./types";

interface Props {
  tasks: TaskView[];
  shown: number;
  filter: BoardFilter;
  onChange: (filter: BoardFilter) => void;
}

/** Search and filters that narrow every column at once. */
export function FilterBar({ tasks, shown, filter, onChange }: Props) {
  const set = (change: Partial<BoardFilter>) => onChange({ ...filter, ...change });
  const { owners, priorities, blockers } = choices(tasks);
  return (
    <div className="filters" role="search" aria-label="Filter the board" data-testid="filters">
      <TextField.Root
        type="search"
        aria-label="Search tasks"
        placeholder="Search tasks…"
        value={filter.text}
        onChange={(e) => set({ text: e.target.value })}
        data-testid="filter-text"
      />
      <select aria-label="Owner" value={filter.owner} onChange={(e) => set({ owner: e.target.value })} data-testid="filter-owner">
        <option value="">Any owner</option>
        {owners.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
      <select aria-label="Status" value={filter.status} onChange={(e) => set({ status: e.target.value as TaskStatus | "" })} data-testid="filter-status">
        <option value="">Any status</option>
        {COLUMNS.map((c) => (
          <option key={c.status} value={c.status}>
            {c.title}
          </option>
        ))}
      </select>
      <select
        aria-label="Priority"
        value={filter.priority ?? ""}
        onChange={(e) => set({ priority: e.target.value === "" ? null : Number(e.target.value) })}
        data-testid="filter-priority"
      >
        <option value="">Any priority</option>
        {priorities.map((p) => (
          <option key={p} value={p}>
            P{p}
          </option>
        ))}
      </select>
      <label className="check">
        <Checkbox checked={filter.readyNow} onCheckedChange={(c) => set({ readyNow: c === true })} data-testid="filter-ready" />
        Ready now
      </label>
      <label className="check">
        <Checkbox checked={filter.landed} onCheckedChange={(c) => set({ landed: c === true })} data-testid="filter-landed" />
        With landed work
      </label>
      <BlockedBy blockers={blockers.join("\n")} filter={filter} onChange={onChange} />
      <span className="filter-count" role="status" data-testid="filter-count">
        {countText(shown, tasks.length, filter)} tasks
      </span>
      {isActive(filter) && (
        <Button variant="soft" type="button" onClick={() => onChange(NO_FILTER)} data-testid="filter-clear">
          Clear filters
        </Button>
      )}
    </div>
  );
}

interface BlockedByProps {
  /** The blockers' ids, one per line: the same string while they are the same. */
  blockers: string;
  filter: BoardFilter;
  onChange: (filter: BoardFilter) => void;
}

/** The blockers to filter by. A board of thousands has hundreds; drawn again only when they
 *  or the filter change, not at every change to the board (a controlled select's update walks
 *  every option, and WebKit then restyles them all). */
const BlockedBy = memo(function BlockedBy({ blockers, filter, onChange }: BlockedByProps) {
  const options = useMemo(
    () =>
      blockers
        .split("\n")
        .filter((id) => id !== "")
        .map((id) => (
          <option key={id} value={id}>
            Blocked by {id}
          </option>
        )),
    [blockers],
  );
  return (
    <select
      aria-label="Blocked by"
      value={filter.blockedBy}
      onChange={(e) => onChange({ ...filter, blockedBy: e.target.value })}
      data-testid="filter-blocked-by"
    >
      <option value="">Blocked by anything</option>
      {options}
    </select>
  );
});
