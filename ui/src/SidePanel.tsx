import { useEffect, useState } from "react";
import { api, errorMessage } from "./api";
import { EditTaskForm } from "./NewTaskForm";
import type { TaskView } from "./types";

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
  const [tab, setTab] = useState<Tab>("plan");
  const [editing, setEditing] = useState<string | null>(null);
  const [text, setText] = useState("");
  const [log, setLog] = useState<string[]>([]);
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

  return (
    <aside className="side" data-testid="side-panel">
      <nav>
        <button aria-pressed={shown === "plan"} onClick={() => setTab("plan")}>Master plan</button>
        <button aria-pressed={shown === "discoveries"} onClick={() => setTab("discoveries")}>Discoveries</button>
        <button aria-pressed={shown === "task"} disabled={!selected} onClick={() => setTab("task")}>
          {selected ? selected.id : "Task"}
        </button>
      </nav>
      {shown === "task" && selected && (
        <div className="task-actions">
          <button data-testid="edit-task-open" onClick={() => setEditing(selected.id)}>
            Edit
          </button>
          {(selected.status === "failed" || selected.status === "cancelled" || selected.stale) && (
            <button data-testid="reset-task" onClick={() => api.reset(selected.id).then(onChanged, (e: unknown) => onError(errorMessage(e)))}>
              Reset to available
            </button>
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
      <pre data-testid="side-text">{text || (shown === "task" ? "No result yet." : "Nothing yet.")}</pre>
      {log.length > 0 && (
        <>
          <h3>{selected?.claimed_by}'s log</h3>
          <pre className="log">{log.join("\n")}</pre>
        </>
      )}
    </aside>
  );
}
