import { Button, Checkbox, TextField } from "@radix-ui/themes";
import { useMemo } from "react";
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
  // The same blockers draw the same options: a board of thousands has hundreds, not compared
  // again at every change that leaves them as they were.
  const blockerKey = blockers.join("\n");
  const blockerOptions = useMemo(
    () =>
      blockerKey
        .split("\n")
        .filter((id) => id !== "")
        .map((id) => (
          <option key={id} value={id}>
            Blocked by {id}
          </option>
        )),
    [blockerKey],
  );
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
      <select aria-label="Blocked by" value={filter.blockedBy} onChange={(e) => set({ blockedBy: e.target.value })} data-testid="filter-blocked-by">
        <option value="">Blocked by anything</option>
        {blockerOptions}
      </select>
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
