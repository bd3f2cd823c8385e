import { Button, Dialog, TextField } from "@radix-ui/themes";
import {
  DndContext,
  KeyboardSensor,
  PointerSensor,
  useDraggable,
  useDroppable,
  useSensor,
  useSensors,
  type DragEndEvent,
} from "@dnd-kit/core";
import { memo, useEffect, useMemo, useRef, useState } from "react";
import { api, errorMessage } from "./api";
import { COLUMN_PAGE, type ColumnsBefore, columnOf, columns, phoneColumns, shownColumns, dependencyLine, filesLine, leaseText, priorityAt, relations, visibleCards } from "./board";
import type { Move } from "./bindings/Move";
import { useLead } from "./scope";
import type { StatusReport, TaskStatus, TaskView } from "./types";

interface Props {
  report: StatusReport;
  /** The cards the filters keep (all of them when none is set). */
  shown: TaskView[];
  /** Whether filters narrowed the board (columns then count "shown of total"). */
  filtered: boolean;
  /** A phone's screen: what needs the lead first, no empty column. */
  narrow: boolean;
  onError: (message: string | null) => void;
  onChanged: () => void;
  selected: string | null;
  onSelect: (id: string) => void;
}

/** A drop that needs words first: a summary to complete, a reason to fail, or a confirmation
 *  (with an optional reason) to cancel. */
interface Pending {
  task: TaskView;
  to: TaskStatus;
  move: Extract<Move, { op: "complete" | "fail" | "cancel" }>;
}

/** Columns by status; cards move by drag and drop or the keyboard, through legal moves only. */
export function Board({ report, shown, filtered, narrow, onError, onChanged, selected, onSelect }: Props) {
  const sensors = useSensors(useSensor(PointerSensor, { activationConstraint: { distance: 4 } }), useSensor(KeyboardSensor));
  const [pending, setPending] = useState<Pending | null>(null);
  // Sorted once per board read, from the columns of the read before (`columns`).
  const before = useRef<ColumnsBefore | undefined>(undefined);
  const byColumn = useMemo(() => columns(shown, before.current), [shown]);
  before.current = { tasks: shown, byColumn };
  const totals = useMemo(() => (filtered ? columns(report.tasks) : byColumn), [filtered, report.tasks, byColumn]);
  const related = relations(report.tasks, selected);
  const find = (id: string) => report.tasks.find((t) => t.id === id);

  const run = (promise: Promise<unknown>) =>
    promise.then(
      () => {
        onError(null); // a move that worked clears an earlier refusal
        onChanged();
      },
      (e: unknown) => onError(errorMessage(e)),
    );

  // The library says what the drop takes (or why not); words are asked for first where the
  // move needs them, and a cancel is confirmed.
  const drop = (task: TaskView, to: TaskStatus) =>
    api.planMove(task.id, to).then(
      ({ move }) => {
        if (move.op === "stay") return;
        if (move.op === "complete" || move.op === "fail" || move.op === "cancel") return setPending({ task, to, move });
        return run(api.moveTask(task.id, to));
      },
      (e: unknown) => onError(errorMessage(e)),
    );

  const onDragEnd = ({ active, over }: DragEndEvent) => {
    const task = find(String(active.id));
    if (!task || !over) return;
    const target = String(over.id);
    if (target.startsWith("card:")) {
      // Dropped on a card: within its column this reorders (sets the priority).
      const other = find(target.slice(5));
      if (!other) return;
      if (columnOf(other.status) === columnOf(task.status)) {
        const column = (byColumn.get(columnOf(task.status)) ?? []).filter((t) => t.id !== task.id);
        const priority = priorityAt(column, column.findIndex((t) => t.id === other.id));
        if (priority !== task.priority) void run(api.editTask(task.id, { priority }));
        return;
      }
      return void drop(task, columnOf(other.status));
    }
    void drop(task, target as TaskStatus);
  };

  return (
    <DndContext sensors={sensors} onDragEnd={onDragEnd}>
      <div className="board-area">
        {selected && (related.waitsFor.size > 0 || related.waitedBy.size > 0) && (
          <p className="relations" data-testid="relations">
            {related.waitsFor.size > 0 && (
              <span className="waits-for">
                {selected} waits for {[...related.waitsFor].join(", ")}
              </span>
            )}
            {related.waitedBy.size > 0 && (
              <span className="waited-by">
                {[...related.waitedBy].join(", ")} wait{related.waitedBy.size === 1 ? "s" : ""} for {selected}
              </span>
            )}
          </p>
        )}
        {report.tasks.length === 0 && (
          <p className="empty-board" data-testid="empty-board">
            No tasks yet. Add one{narrow ? " with New task" : " above"}, or give a team a goal in the Team view: its planner
            proposes the tasks.
          </p>
        )}
        <section className="board" data-testid="board">
          {(narrow ? phoneColumns(totals) : shownColumns(totals)).map((column) => (
            <Column
              key={column.status}
              status={column.status}
              title={column.title}
              tasks={byColumn.get(column.status) ?? []}
              total={filtered ? (totals.get(column.status)?.length ?? 0) : null}
              selected={selected}
              related={related}
              onSelect={onSelect}
            />
          ))}
        </section>
      </div>
      {pending && (
        <Words
          pending={pending}
          onCancel={() => setPending(null)}
          onSubmit={(text) => {
            const { task, to } = pending;
            setPending(null);
            void run(api.moveTask(task.id, to, text));
          }}
        />
      )}
    </DndContext>
  );
}

interface ColumnProps {
  status: TaskStatus;
  title: string;
  tasks: TaskView[];
  /** All the column's cards, when filters show fewer. */
  total: number | null;
  selected: string | null;
  related: { waitsFor: Set<string>; waitedBy: Set<string> };
  onSelect: (id: string) => void;
}

function Column({ status, title, tasks, total, selected, related, onSelect }: ColumnProps) {
  const { setNodeRef, isOver } = useDroppable({ id: status });
  const [shown, setShown] = useState(COLUMN_PAGE);
  const { cards, hidden } = visibleCards(tasks, shown, selected);
  return (
    <div ref={setNodeRef} className={`column${isOver ? " over" : ""}`} data-testid={`column-${status}`} aria-label={title}>
      <h2>
        {title}{" "}
        <span className="count" data-testid={`count-${status}`}>
          {total === null ? tasks.length : `${tasks.length} of ${total}`}
        </span>
      </h2>
      {cards.map((task) => (
        <Card
          key={task.id}
          task={task}
          selected={task.id === selected}
          relation={related.waitsFor.has(task.id) ? "waited-on" : related.waitedBy.has(task.id) ? "waiting" : null}
          onSelect={onSelect}
        />
      ))}
      {hidden > 0 && (
        <Button variant="soft" className="more" data-testid={`more-${status}`} onClick={() => setShown((n) => n + COLUMN_PAGE)}>
          Show {Math.min(hidden, COLUMN_PAGE)} more of {hidden}
        </Button>
      )}
    </div>
  );
}

interface CardProps {
  task: TaskView;
  selected: boolean;
  /** How the card stands to the selected one: it waits for this card, or this card waits for it. */
  relation: "waited-on" | "waiting" | null;
  onSelect: (id: string) => void;
}

/** Drawn again only when its own props change: a change to one task redraws one card, not the
 *  board's hundreds (the report keeps unchanged tasks' objects, `withUpdate`). */
const Card = memo(function Card({ task, selected, relation, onSelect }: CardProps) {
  // A responder's page moves no card (the server would refuse the move).
  const lead = useLead();
  const drag = useDraggable({ id: task.id, disabled: !lead });
  const drop = useDroppable({ id: `card:${task.id}` });
  const style = drag.transform ? { transform: `translate(${drag.transform.x}px, ${drag.transform.y}px)` } : undefined;
  const deps = dependencyLine(task);
  const held = filesLine(task);
  const lease = leaseText(task);
  return (
    <article
      ref={(node) => {
        drag.setNodeRef(node);
        drop.setNodeRef(node);
      }}
      style={style}
      className={`card${task.blocked_by.length > 0 ? " blocked" : ""}${task.stale ? " stale" : ""}${selected ? " selected" : ""}${relation ? ` ${relation}` : ""}`}
      onClick={() => onSelect(task.id)}
      // Reached with Tab, a card is selected as a click selects it: its panel and relations follow.
      onFocus={() => onSelect(task.id)}
      data-testid={`card-${task.id}`}
      data-status={task.status}
      {...drag.listeners}
      {...drag.attributes}
    >
      <div className="card-head">
        <span className="id">{task.id}</span>
        <span className="priority" title="priority (1 is the most urgent)">P{task.priority}</span>
      </div>
      <p className="description">{task.description}</p>
      {task.claimed_by && (
        <p className="owner">
          {task.claimed_by}
          {lease && <span className="lease"> · {lease}</span>}
        </p>
      )}
      {deps && <p className="deps">{deps}</p>}
      {held && (
        <p className="held" data-testid={`held-${task.id}`} title={(task.waits_on_files ?? []).map((h) => h.paths.join(", ")).join("; ")}>
          {held}
        </p>
      )}
      {task.context.files.length > 0 && (
        <p className="files" title={task.claimed_by && (task.status === "claimed" || task.status === "in_progress") ? `reserved for ${task.claimed_by} while it holds the task` : "the task's files"}>
          {task.claimed_by && (task.status === "claimed" || task.status === "in_progress") ? "reserved: " : ""}
          {task.context.files.join(", ")}
        </p>
      )}
      {task.failure_reason && <p className="reason">{task.failure_reason}</p>}
    </article>
  );
});

/** What the words dialog asks, per move. */
const WORDS = {
  complete: { label: "What was done?", action: "Complete", initial: "Done (moved to done on the board)", required: true },
  fail: { label: "Why did it fail?", action: "Fail", initial: "", required: true },
  cancel: { label: "Cancel this task? Why is it no longer wanted (optional)", action: "Cancel task", initial: "", required: false },
} as const;

function Words({ pending, onCancel, onSubmit }: { pending: Pending; onCancel: () => void; onSubmit: (text: string) => void }) {
  const words = WORDS[pending.move.op];
  const [text, setText] = useState<string>(words.initial);
  const field = useRef<HTMLInputElement>(null);
  // After a drop, the drag library gives focus back to the card; take it for the text once
  // that has happened.
  useEffect(() => {
    const frame = requestAnimationFrame(() => field.current?.focus());
    return () => cancelAnimationFrame(frame);
  }, []);
  const who = "agent" in pending.move ? `, as ${pending.move.agent}` : "";
  return (
    <Dialog.Root open onOpenChange={(open) => !open && onCancel()}>
      <Dialog.Content className="words-dialog" aria-describedby={undefined} data-testid="words-dialog">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (!words.required || text.trim() !== "") onSubmit(text);
          }}
        >
          <Dialog.Title size="3">
            {words.label} ({pending.task.id}
            {who})
          </Dialog.Title>
          <TextField.Root ref={field} aria-label={words.label} value={text} onChange={(e) => setText(e.target.value)} data-testid="words" />
          <div className="dialog-buttons">
            <Dialog.Close>
              <Button type="button" variant="soft" color="gray">
                {pending.move.op === "cancel" ? "Keep it" : "Cancel"}
              </Button>
            </Dialog.Close>
            <Button type="submit" variant="solid" disabled={words.required && text.trim() === ""} data-testid="words-ok">
              {words.action}
            </Button>
          </div>
        </form>
      </Dialog.Content>
    </Dialog.Root>
  );
}
