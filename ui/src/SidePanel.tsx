import { useEffect, useState } from "react";
import { api, errorMessage } from "./api";
import type { TaskView } from "./types";

type Tab = "plan" | "discoveries" | "task";

/** The master plan, the discoveries, or the selected task's result and its worker's log tail.
 * Reloaded whenever the board changes (`version`). */
export function SidePanel({ selected, version, onError }: { selected: TaskView | null; version: number; onError: (m: string) => void }) {
  const [tab, setTab] = useState<Tab>("plan");
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
