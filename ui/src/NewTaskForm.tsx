import { useState } from "react";
import { api, errorMessage } from "./api";
import { allowedDependencies } from "./board";
import type { TaskView } from "./types";

/** `leader add-task` as a form: dependencies are chosen from existing tasks. */
export function NewTaskForm({ tasks, onError, onAdded }: { tasks: TaskView[]; onError: (m: string) => void; onAdded: () => void }) {
  const [description, setDescription] = useState("");
  const [priority, setPriority] = useState(5);
  const [depends, setDepends] = useState<string[]>([]);
  const [files, setFiles] = useState("");
  const [hints, setHints] = useState("");

  const submit = () => {
    api
      .addTask({
        description,
        priority,
        depends,
        files: files.split(",").map((f) => f.trim()).filter((f) => f !== ""),
        hints,
      })
      .then(() => {
        setDescription("");
        setDepends([]);
        setFiles("");
        setHints("");
        onAdded();
      }, (e: unknown) => onError(errorMessage(e)));
  };

  return (
    <form
      className="new-task"
      data-testid="new-task"
      onSubmit={(e) => {
        e.preventDefault();
        submit();
      }}
    >
      <input aria-label="Description" placeholder="New task…" value={description} onChange={(e) => setDescription(e.target.value)} data-testid="new-description" />
      <input aria-label="Priority" type="number" min={1} max={1000} value={priority} onChange={(e) => setPriority(Number(e.target.value))} />
      <select aria-label="Depends on" multiple value={depends} onChange={(e) => setDepends([...e.target.selectedOptions].map((o) => o.value))}>
        {allowedDependencies(tasks).map((id) => (
          <option key={id} value={id}>
            {id}
          </option>
        ))}
      </select>
      <input aria-label="Files" placeholder="files, comma separated" value={files} onChange={(e) => setFiles(e.target.value)} />
      <input aria-label="Hints" placeholder="hints" value={hints} onChange={(e) => setHints(e.target.value)} />
      <button type="submit" disabled={description.trim() === ""} data-testid="add-task">
        Add task
      </button>
    </form>
  );
}
