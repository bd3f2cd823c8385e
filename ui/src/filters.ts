// The board's search and filters, free of React: what a filter is, which cards it keeps, and
// how it is remembered per project (in the WebView's local storage, so a restart keeps it).

import { columnOf } from "./board";
import type { TaskStatus, TaskView } from "./types";

export interface BoardFilter {
  /** Words to find in a card's id, description, hints or files (case ignored). */
  text: string;
  /** Only cards held (or finished) by this agent; "" for any. */
  owner: string;
  /** Only this column; "" for any. */
  status: TaskStatus | "";
  /** Only this priority; null for any. */
  priority: number | null;
  /** Only cards a worker could claim now. */
  readyNow: boolean;
  /** Only cards waiting for this task; "" for any. */
  blockedBy: string;
  /** With the landed work archived off the board (read with the board, not filtered here). */
  landed: boolean;
}

export const NO_FILTER: BoardFilter = { text: "", owner: "", status: "", priority: null, readyNow: false, blockedBy: "", landed: false };

export function isActive(filter: BoardFilter): boolean {
  return (
    filter.text.trim() !== "" ||
    filter.owner !== "" ||
    filter.status !== "" ||
    filter.priority !== null ||
    filter.readyNow ||
    filter.blockedBy !== "" ||
    filter.landed
  );
}

/** Whether `task` passes every part of `filter`. */
export function matches(task: TaskView, filter: BoardFilter): boolean {
  const words = filter.text.trim().toLowerCase();
  if (words !== "") {
    const haystack = [task.id, task.description, task.context.hints, ...task.context.files].join("\n").toLowerCase();
    if (!words.split(/\s+/).every((word) => haystack.includes(word))) return false;
  }
  if (filter.owner !== "" && task.claimed_by !== filter.owner) return false;
  if (filter.status !== "" && columnOf(task.status) !== columnOf(filter.status)) return false;
  if (filter.priority !== null && task.priority !== filter.priority) return false;
  if (filter.readyNow && !task.ready) return false;
  if (filter.blockedBy !== "" && !task.blocked_by.includes(filter.blockedBy)) return false;
  return true;
}

export function filterTasks(tasks: TaskView[], filter: BoardFilter): TaskView[] {
  return isActive(filter) ? tasks.filter((t) => matches(t, filter)) : tasks;
}

/** Ids in the order a person reads them (task-2 before task-10). One collator for every
 *  comparison: `localeCompare` with options makes one per call, which on a board of thousands
 *  was most of a redraw in WebKit. */
const BY_NUMBER = new Intl.Collator(undefined, { numeric: true });

/** The choices the filter bar offers, from the board. */
export function choices(tasks: TaskView[]): { owners: string[]; priorities: number[]; blockers: string[] } {
  const owners = new Set<string>();
  const priorities = new Set<number>();
  const blockers = new Set<string>();
  for (const task of tasks) {
    if (task.claimed_by) owners.add(task.claimed_by);
    priorities.add(task.priority);
    for (const id of task.blocked_by) blockers.add(id);
  }
  return {
    owners: [...owners].sort(),
    priorities: [...priorities].sort((a, b) => a - b),
    blockers: [...blockers].sort(BY_NUMBER.compare),
  };
}

/** "12 of 340" when filtered, "340" when not. */
export function countText(shown: number, total: number, filter: BoardFilter): string {
  return isActive(filter) ? `${shown} of ${total}` : `${total}`;
}

function storageKey(project: string): string {
  return `baton.board-filter:${project}`;
}

/** The filter last used on `project`; none when nothing (or nothing readable) was kept. */
export function loadFilter(storage: Pick<Storage, "getItem">, project: string): BoardFilter {
  try {
    const kept: unknown = JSON.parse(storage.getItem(storageKey(project)) ?? "null");
    if (typeof kept !== "object" || kept === null) return NO_FILTER;
    const k = kept as Partial<Record<keyof BoardFilter, unknown>>;
    return {
      text: typeof k.text === "string" ? k.text : "",
      owner: typeof k.owner === "string" ? k.owner : "",
      status: typeof k.status === "string" ? (k.status as TaskStatus | "") : "",
      priority: typeof k.priority === "number" ? k.priority : null,
      readyNow: k.readyNow === true,
      blockedBy: typeof k.blockedBy === "string" ? k.blockedBy : "",
      landed: k.landed === true,
    };
  } catch {
    return NO_FILTER;
  }
}

export function saveFilter(storage: Pick<Storage, "setItem" | "removeItem">, project: string, filter: BoardFilter): void {
  if (isActive(filter)) storage.setItem(storageKey(project), JSON.stringify(filter));
  else storage.removeItem(storageKey(project));
}
