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
import { useEffect, useRef, useState } from "react";
import { api, errorMessage } from "./api";
import { COLUMN_PAGE, COLUMNS, columnOf, columns, dependencyLine, leaseText, moveFor, priorityAt, visibleCards, type Move } from "./board";
import type { StatusReport, TaskStatus, TaskView } from "./types";

interface Props {
  report: StatusReport;
  onError: (message: string | null) => void;
  onChanged: () => void;
  selected: string | null;
  onSelect: (id: string) => void;
}

/** A drop that needs words first (a summary to complete, a reason to fail). */
interface Pending {
  task: TaskView;
  move: Extract<Move, { needs: string }>;
}

/** Columns by status; cards move by drag and drop or the keyboard, through legal moves only. */
export function Board({ report, onError, onChanged, selected, onSelect }: Props) {
  const sensors = useSensors(useSensor(PointerSensor, { activationConstraint: { distance: 4 } }), useSensor(KeyboardSensor));
  const [pending, setPending] = useState<Pending | null>(null);
  const byColumn = columns(report.tasks);
  const find = (id: string) => report.tasks.find((t) => t.id === id);

  const run = (promise: Promise<unknown>) =>
    promise.then(
      () => {
        onError(null); // a move that worked clears an earlier refusal
        onChanged();
      },
      (e: unknown) => onError(errorMessage(e)),
    );

  const apply = (task: TaskView, move: Move) => {
    if ("refused" in move) return onError(move.refused);
    switch (move.op) {
      case "none":
        return;
      case "claim":
        // Nothing ready is not an error of the call, but the lead should hear why.
        return run(
          api.claim(move.agent).then((out) => {
            if (!out.task) throw { kind: "nothing_to_claim", message: `Nothing to claim: ${out.reason ?? "no task is ready"}` };
          }),
        );
      case "start":
        return run(api.start(move.agent, task.id));
      case "release":
        return run(api.release(move.agent, task.id));
      case "reset":
        return run(api.reset(task.id));
      case "complete":
      case "fail":
        return setPending({ task, move });
    }
  };

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
      return apply(task, moveFor(task, columnOf(other.status)));
    }
    apply(task, moveFor(task, target as TaskStatus));
  };

  return (
    <DndContext sensors={sensors} onDragEnd={onDragEnd}>
      <section className="board" data-testid="board">
        {COLUMNS.map((column) => (
          <Column
            key={column.status}
            status={column.status}
            title={column.title}
            tasks={byColumn.get(column.status) ?? []}
            selected={selected}
            onSelect={onSelect}
          />
        ))}
      </section>
      {pending && (
        <Words
          pending={pending}
          onCancel={() => setPending(null)}
          onSubmit={(text) => {
            const { task, move } = pending;
            setPending(null);
            void run(move.op === "complete" ? api.complete(move.agent, task.id, text) : api.fail(move.agent, task.id, text));
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
  selected: string | null;
  onSelect: (id: string) => void;
}

function Column({ status, title, tasks, selected, onSelect }: ColumnProps) {
  const { setNodeRef, isOver } = useDroppable({ id: status });
  const [shown, setShown] = useState(COLUMN_PAGE);
  const { cards, hidden } = visibleCards(tasks, shown, selected);
  return (
    <div ref={setNodeRef} className={`column${isOver ? " over" : ""}`} data-testid={`column-${status}`} aria-label={title}>
      <h2>
        {title} <span className="count">{tasks.length}</span>
      </h2>
      {cards.map((task) => (
        <Card key={task.id} task={task} selected={task.id === selected} onSelect={onSelect} />
      ))}
      {hidden > 0 && (
        <button className="more" data-testid={`more-${status}`} onClick={() => setShown((n) => n + COLUMN_PAGE)}>
          Show {Math.min(hidden, COLUMN_PAGE)} more of {hidden}
        </button>
      )}
    </div>
  );
}

function Card({ task, selected, onSelect }: { task: TaskView; selected: boolean; onSelect: (id: string) => void }) {
  const drag = useDraggable({ id: task.id });
  const drop = useDroppable({ id: `card:${task.id}` });
  const style = drag.transform ? { transform: `translate(${drag.transform.x}px, ${drag.transform.y}px)` } : undefined;
  const deps = dependencyLine(task);
  const lease = leaseText(task);
  return (
    <article
      ref={(node) => {
        drag.setNodeRef(node);
        drop.setNodeRef(node);
      }}
      style={style}
      className={`card${task.blocked_by.length > 0 ? " blocked" : ""}${task.stale ? " stale" : ""}${selected ? " selected" : ""}`}
      onClick={() => onSelect(task.id)}
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
      {task.context.files.length > 0 && <p className="files">{task.context.files.join(", ")}</p>}
      {task.failure_reason && <p className="reason">{task.failure_reason}</p>}
    </article>
  );
}

function Words({ pending, onCancel, onSubmit }: { pending: Pending; onCancel: () => void; onSubmit: (text: string) => void }) {
  // Completing gets an editable default; failing needs a reason written.
  const [text, setText] = useState(pending.move.op === "complete" ? "Done (moved to done on the board)" : "");
  const field = useRef<HTMLInputElement>(null);
  // After a drop, the drag library gives focus back to the card; take it for the text once
  // that has happened.
  useEffect(() => {
    const frame = requestAnimationFrame(() => field.current?.focus());
    return () => cancelAnimationFrame(frame);
  }, []);
  const label = pending.move.op === "complete" ? "What was done?" : "Why did it fail?";
  return (
    <div className="dialog" role="dialog" aria-label={label}>
      <label>
        {label} ({pending.task.id}, as {pending.move.agent})
        <input ref={field} value={text} onChange={(e) => setText(e.target.value)} data-testid="words" />
      </label>
      <button disabled={text.trim() === ""} onClick={() => onSubmit(text)} data-testid="words-ok">
        {pending.move.op === "complete" ? "Complete" : "Fail"}
      </button>
      <button onClick={onCancel}>Cancel</button>
    </div>
  );
}
