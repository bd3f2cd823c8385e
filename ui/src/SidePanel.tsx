import { Button, TextField } from "@radix-ui/themes";
import { Markdown } from "./Markdown";
import { useEffect, useState } from "react";
import { api, errorMessage } from "./api";
import { EditTaskForm } from "./NewTaskForm";
import type { Move } from "./bindings/Move";
import { useLead } from "./scope";
import type { TaskView } from "./types";

/** The leader's moves on the selected task that the library allows now. */
interface LeaderMoves {
  toAvailable: Move | null;
  cancel: boolean;
}

const NO_MOVES: LeaderMoves = { toAvailable: null, cancel: false };

/** Asks the library which of the side panel's moves are legal for `task` (a refusal just
 *  hides the button; dragging the card says why). */
async function leaderMoves(task: TaskView): Promise<LeaderMoves> {
  const [available, cancelled] = await Promise.allSettled([api.planMove(task.id, "available"), api.planMove(task.id, "cancelled")]);
  const toAvailable = available.status === "fulfilled" ? available.value.move : null;
  return {
    // A held task is offered back only once its lease has run out; the board drags the rest.
    toAvailable: toAvailable?.op === "reset" || toAvailable?.op === "approve" || (toAvailable?.op === "release" && task.stale) ? toAvailable : null,
    cancel: cancelled.status === "fulfilled" && cancelled.value.move.op === "cancel",
  };
}

type Tab = "plan" | "discoveries" | "task";

/** The master plan, the discoveries, or the selected task's result and its worker's log tail.
 * Reloaded whenever the board changes (`version`). */
export function SidePanel({
  selected,
  tasks,
  version,
  onError,
  onChanged,
}: {
  selected: TaskView | null;
  tasks: TaskView[];
  version: number;
  onError: (m: string) => void;
  onChanged: () => void;
}) {
  const lead = useLead();
  const [tab, setTab] = useState<Tab>("plan");
  const [editing, setEditing] = useState<string | null>(null);
  const [text, setText] = useState("");
  const [log, setLog] = useState<string[]>([]);
  const [moves, setMoves] = useState<LeaderMoves>(NO_MOVES);
  const [cancelling, setCancelling] = useState<string | null>(null);
  const [reason, setReason] = useState("");
  const shown: Tab = selected && tab === "task" ? "task" : tab === "task" ? "plan" : tab;

  useEffect(() => {
    const load =
      shown === "plan" ? api.masterPlan() : shown === "discoveries" ? api.discoveries() : selected ? api.taskResult(selected.id) : Promise.resolve("");
    load.then(setText, (e: unknown) => onError(errorMessage(e)));
    const owner = selected?.claimed_by;
    if (shown === "task" && owner) {
      api.logs(owner, 20).then((lines) => setLog(lines.map((l) => l.line)), (e: unknown) => onError(errorMessage(e)));
    } else {
      setLog([]);
    }
  }, [shown, selected, version, onError]);

  useEffect(() => {
    let current = true;
    setMoves(NO_MOVES);
    if (selected) void leaderMoves(selected).then((m) => current && setMoves(m));
    return () => {
      current = false;
    };
  }, [selected, version]);

  const act = (promise: Promise<unknown>) => promise.then(onChanged, (e: unknown) => onError(errorMessage(e)));

  return (
    <aside className="side" data-testid="side-panel">
      <nav>
        <Button variant="soft" aria-pressed={shown === "plan"} onClick={() => setTab("plan")}>Master plan</Button>
        <Button variant="soft" aria-pressed={shown === "discoveries"} onClick={() => setTab("discoveries")}>Discoveries</Button>
        <Button variant="soft" aria-pressed={shown === "task"} disabled={!selected} onClick={() => setTab("task")}>
          {selected ? selected.id : "Task"}
        </Button>
      </nav>
      {shown === "task" && selected && lead && (
        <div className="task-actions">
          <Button variant="soft" data-testid="edit-task-open" onClick={() => setEditing(selected.id)}>
            Edit
          </Button>
          {moves.toAvailable && (
            <Button variant="soft" data-testid="reset-task" onClick={() => act(api.moveTask(selected.id, "available"))}>
              {moves.toAvailable.op === "release"
                ? `Release for ${moves.toAvailable.agent} (lease expired)`
                : moves.toAvailable.op === "approve"
                  ? "Approve (available to claim)"
                  : "Reset to available"}
            </Button>
          )}
          {moves.cancel && cancelling !== selected.id && (
            <Button variant="soft" color="red" data-testid="cancel-task" onClick={() => setCancelling(selected.id)}>
              Cancel task…
            </Button>
          )}
          {moves.cancel && cancelling === selected.id && (
            <form
              className="confirm"
              onSubmit={(e) => {
                e.preventDefault();
                setCancelling(null);
                setReason("");
                void act(api.moveTask(selected.id, "cancelled", reason));
              }}
            >
              <label>
                Why is it no longer wanted? (optional)
                <TextField.Root value={reason} onChange={(e) => setReason(e.target.value)} data-testid="cancel-reason" />
              </label>
              <Button variant="solid" type="submit" data-testid="cancel-confirm">
                Cancel {selected.id}
              </Button>
              <Button variant="soft" type="button" onClick={() => setCancelling(null)}>
                Keep it
              </Button>
            </form>
          )}
        </div>
      )}
      {shown === "task" && selected && editing === selected.id && (
        <EditTaskForm
          key={selected.id}
          task={selected}
          tasks={tasks}
          onError={onError}
          onDone={() => {
            setEditing(null);
            onChanged();
          }}
        />
      )}
      {text ? <Markdown text={text} testid="side-text" /> : <p data-testid="side-text">{shown === "task" ? "No result yet." : "Nothing yet."}</p>}
      {log.length > 0 && (
        <>
          <h3>{selected?.claimed_by}'s log</h3>
          <pre className="log">{log.join("\n")}</pre>
        </>
      )}
    </aside>
  );
}
