// The dependency picker's choices, free of React: the tasks a search finds among those a task
// may depend on, without those chosen already, the first few only (a board may hold thousands).

import type { TaskView } from "./types";

/** How many matches the picker lists at once. */
export const PICKER_LIMIT = 12;

export function pickerMatches(
  allowed: string[],
  tasks: TaskView[],
  chosen: string[],
  query: string,
  limit = PICKER_LIMIT,
): { shown: TaskView[]; more: number } {
  const words = query.trim().toLowerCase().split(/\s+/).filter((w) => w !== "");
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const matching: TaskView[] = [];
  for (const id of allowed) {
    const task = byId.get(id);
    if (!task || chosen.includes(id)) continue;
    const text = `${task.id} ${task.description}`.toLowerCase();
    if (words.every((w) => text.includes(w))) matching.push(task);
  }
  return { shown: matching.slice(0, limit), more: Math.max(0, matching.length - limit) };
}
