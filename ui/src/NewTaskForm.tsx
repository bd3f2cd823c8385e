import { Button, TextField } from "@radix-ui/themes";
import { useState } from "react";
import { DEFAULT_PRIORITY } from "./bindings/Defaults";
import { api, errorMessage } from "./api";
import { allowedDependencies } from "./board";
import { pickerMatches } from "./picker";
import type { TaskView } from "./types";

/** What a task form edits; files as typed (comma separated). */
export interface TaskDraft {
  description: string;
  priority: number;
  depends: string[];
  files: string;
  hints: string;
  /** How the work will be judged done. */
  acceptance: string;
}

const EMPTY: TaskDraft = { description: "", priority: DEFAULT_PRIORITY, depends: [], files: "", hints: "", acceptance: "" };

export function draftOf(task: TaskView): TaskDraft {
  return {
    description: task.description,
    priority: task.priority,
    depends: task.dependencies,
    files: task.context.files.join(", "),
    hints: task.context.hints,
    acceptance: task.acceptance ?? "",
  };
}

function filesOf(draft: TaskDraft): string[] {
  return draft.files
    .split(",")
    .map((f) => f.trim())
    .filter((f) => f !== "");
}

/** The fields of a task. Dependencies are chosen from existing tasks; when editing, the task
 *  itself and every task that depends on it are left out, so no cycle can be chosen. */
function TaskFields({ tasks, editing, draft, onChange }: { tasks: TaskView[]; editing?: string; draft: TaskDraft; onChange: (d: TaskDraft) => void }) {
  const set = (change: Partial<TaskDraft>) => onChange({ ...draft, ...change });
  return (
    <>
      <TextField.Root aria-label="Description" placeholder="New task…" value={draft.description} onChange={(e) => set({ description: e.target.value })} data-testid="field-description" />
      <TextField.Root aria-label="Priority" type="number" min={1} max={1000} value={draft.priority} onChange={(e) => set({ priority: Number(e.target.value) })} data-testid="field-priority" />
      <DependencyPicker allowed={allowedDependencies(tasks, editing)} tasks={tasks} chosen={draft.depends} onChange={(depends) => set({ depends })} />
      <TextField.Root aria-label="Files" placeholder="files, comma separated" value={draft.files} onChange={(e) => set({ files: e.target.value })} data-testid="field-files" />
      <TextField.Root aria-label="Hints" placeholder="hints" value={draft.hints} onChange={(e) => set({ hints: e.target.value })} data-testid="field-hints" />
      <TextField.Root aria-label="Acceptance" placeholder="done when…" value={draft.acceptance} onChange={(e) => set({ acceptance: e.target.value })} data-testid="field-acceptance" />
    </>
  );
}

/** Dependencies chosen by searching: the chosen ones as removable chips, and the tasks the
 *  search finds (id or description words) as buttons that add them. */
function DependencyPicker({ allowed, tasks, chosen, onChange }: { allowed: string[]; tasks: TaskView[]; chosen: string[]; onChange: (ids: string[]) => void }) {
  const [query, setQuery] = useState("");
  // Matched only while something is typed (nothing is listed before): a board of thousands
  // is not searched at every change to it.
  const searching = query.trim() !== "";
  const { shown, more } = searching ? pickerMatches(allowed, tasks, chosen, query) : { shown: [], more: 0 };
  return (
    <fieldset className="depends" data-testid="field-depends" data-allowed={allowed.length}>
      <legend>Depends on</legend>
      {chosen.length > 0 && (
        <ul className="chosen" aria-label="Chosen dependencies">
          {chosen.map((id) => (
            <li key={id}>
              {id}{" "}
              <button type="button" aria-label={`Remove ${id}`} onClick={() => onChange(chosen.filter((c) => c !== id))} data-testid={`dep-remove-${id}`}>
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      <TextField.Root type="search" aria-label="Find a task to depend on" placeholder="find a task…" value={query} onChange={(e) => setQuery(e.target.value)} data-testid="depends-search" />
      {searching && (
        <ul className="matches" aria-label="Matching tasks">
          {shown.map((task) => (
            <li key={task.id}>
              <button
                type="button"
                onClick={() => {
                  onChange([...chosen, task.id]);
                  setQuery("");
                }}
                data-testid={`dep-option-${task.id}`}
              >
                {task.id}: {task.description}
              </button>
            </li>
          ))}
          {shown.length === 0 && <li className="none">No task matches (a task cannot wait for itself or for one that waits for it).</li>}
          {more > 0 && <li className="none">{more} more: narrow the search</li>}
        </ul>
      )}
    </fieldset>
  );
}

/** `leader add-task` as a form. */
export function NewTaskForm({ tasks, onError, onAdded }: { tasks: TaskView[]; onError: (m: string) => void; onAdded: () => void }) {
  const [draft, setDraft] = useState<TaskDraft>(EMPTY);
  const submit = () => {
    api.addTask({ description: draft.description, priority: draft.priority, depends: draft.depends, files: filesOf(draft), hints: draft.hints, id: null, acceptance: draft.acceptance.trim() || null, proposed: false, sub_plan: false }).then(
      () => {
        setDraft({ ...EMPTY, priority: draft.priority });
        onAdded();
      },
      (e: unknown) => onError(errorMessage(e)),
    );
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
      <TaskFields tasks={tasks} draft={draft} onChange={setDraft} />
      <Button variant="solid" type="submit" disabled={draft.description.trim() === ""} data-testid="add-task">
        Add task
      </Button>
    </form>
  );
}

/** `leader edit TASK` as a form, prefilled with the task. */
export function EditTaskForm({ task, tasks, onError, onDone }: { task: TaskView; tasks: TaskView[]; onError: (m: string) => void; onDone: () => void }) {
  const [draft, setDraft] = useState<TaskDraft>(() => draftOf(task));
  return (
    <form
      className="edit-task"
      data-testid="edit-task"
      onSubmit={(e) => {
        e.preventDefault();
        api
          .editTask(task.id, { description: draft.description, priority: draft.priority, depends: draft.depends, files: filesOf(draft), hints: draft.hints, acceptance: draft.acceptance })
          .then(onDone, (err: unknown) => onError(errorMessage(err)));
      }}
    >
      <TaskFields tasks={tasks} editing={task.id} draft={draft} onChange={setDraft} />
      <Button variant="solid" type="submit" disabled={draft.description.trim() === ""} data-testid="save-task">
        Save
      </Button>
      <Button variant="soft" type="button" onClick={onDone}>
        Cancel
      </Button>
    </form>
  );
}
