// Board logic, free of React and of the backend: which columns exist, in what order cards
// stand, and how a card describes its dependencies. Tested with Vitest. What a drop means
// (which operation, in whose name, or why not) is the library's answer (`api.planMove`), not
// a table kept here.

import type { StatusReport, TaskStatus, TaskView } from "./types";
import type { BoardUpdate } from "./bindings/BoardUpdate";
import { DEFAULT_PRIORITY } from "./bindings/Defaults";

/** The board's columns, left to right. Proposed tasks (a plan the lead has not approved;
 *  dropping one on Available approves it) come first; cancelled tasks share the failed column. */
export const COLUMNS: { status: TaskStatus; title: string }[] = [
  { status: "proposed", title: "Proposed" },
  { status: "available", title: "Available" },
  { status: "claimed", title: "Claimed" },
  { status: "in_progress", title: "In progress" },
  { status: "done", title: "Done" },
  { status: "failed", title: "Failed or cancelled" },
];

export function columnOf(status: TaskStatus): TaskStatus {
  return status === "cancelled" ? "failed" : status;
}

/** The columns the board shows for `byColumn` (every task, unfiltered): the proposed column
 *  only while a plan waits for approval. */
export function shownColumns(byColumn: Map<TaskStatus, TaskView[]>): typeof COLUMNS {
  return COLUMNS.filter((c) => c.status !== "proposed" || (byColumn.get("proposed")?.length ?? 0) > 0);
}

/** On a phone, what needs the lead first: failures, a plan waiting for approval, then the work
 *  under way, what is ready, and what is done; only the columns that hold a card. */
const PHONE_ORDER: TaskStatus[] = ["failed", "proposed", "in_progress", "claimed", "available", "done"];

export function phoneColumns(byColumn: Map<TaskStatus, TaskView[]>): typeof COLUMNS {
  return PHONE_ORDER.flatMap((status) => COLUMNS.filter((c) => c.status === status)).filter(
    (c) => (byColumn.get(c.status)?.length ?? 0) > 0,
  );
}

/** Cards in a column: most urgent first, then oldest, as workers claim them. */
export function sortCards(tasks: TaskView[]): TaskView[] {
  return [...tasks].sort(cardOrder);
}

/** One collator for every comparison of cards, as `localeCompare` without options compares
 *  (an engine may make one per call otherwise). */
const COLLATOR = new Intl.Collator();

/** The order of cards in a column (ids are unique, so no two cards tie). */
function cardOrder(a: TaskView, b: TaskView): number {
  return (
    a.priority - b.priority ||
    (a.created_at === b.created_at ? 0 : COLLATOR.compare(a.created_at ?? "", b.created_at ?? "")) ||
    COLLATOR.compare(a.id, b.id)
  );
}

/** A board's columns before a change, and the tasks (in their order) they were made of. */
export interface ColumnsBefore {
  tasks: TaskView[];
  byColumn: Map<TaskStatus, TaskView[]>;
}

/** The cards that left a board and those that came into it, found by `changesBetween`. */
interface Changes {
  gone: TaskView[];
  come: TaskView[];
}

/** How many cards a change may move to be taken into the columns before it one by one. */
const FEW_CHANGES = 64;

/** The tasks of each column, sorted. With `previous` (whose unchanged tasks are the same
 *  objects, in the same order, `withUpdate`): when a few cards changed, only they are taken
 *  out of and put into the columns before, where they sort (a change to one task of
 *  thousands looks at each of the others once, by identity, and sorts none of them); a column
 *  no card left or came into is the same array. Otherwise each column is sorted from the one
 *  before (`sortedAsBefore`). */
export function columns(tasks: TaskView[], previous?: ColumnsBefore): Map<TaskStatus, TaskView[]> {
  if (previous !== undefined) {
    const changes = changesBetween(previous.tasks, tasks, FEW_CHANGES);
    if (changes !== null) return withChanges(previous.byColumn, changes);
  }
  const byColumn = new Map<TaskStatus, TaskView[]>(COLUMNS.map((c) => [c.status, []]));
  for (const task of tasks) byColumn.get(columnOf(task.status))?.push(task);
  for (const [status, list] of byColumn) byColumn.set(status, sortedAsBefore(list, previous?.byColumn.get(status)));
  return byColumn;
}

/** The cards of `before` not in `after` and those of `after` not in `before`, walking the two
 *  lists side by side: `after` holds exactly `before`'s cards less `gone`, and `come`. `null`
 *  when more than `most` cards differ (another order, another filter): no cheaper then. */
export function changesBetween(before: TaskView[], after: TaskView[], most: number): Changes | null {
  const gone: TaskView[] = [];
  const come: TaskView[] = [];
  let i = 0;
  let j = 0;
  while (i < before.length || j < after.length) {
    const was = before[i];
    const now = after[j];
    if (was === now) {
      i++;
      j++;
      continue;
    }
    if (was !== undefined && (now === undefined || before[i + 1] === now)) {
      gone.push(was); // left the board here
      i++;
    } else if (now !== undefined && (was === undefined || after[j + 1] === was)) {
      come.push(now); // came into it here
      j++;
    } else {
      // One card in the other's place (a task changed).
      gone.push(was as TaskView);
      come.push(now as TaskView);
      i++;
      j++;
    }
    if (gone.length + come.length > most) return null;
  }
  return { gone, come };
}

/** The columns `before` with the cards `gone` taken out and those that `come` put in where
 *  they sort: the columns neither touches are the arrays they were. */
function withChanges(before: Map<TaskStatus, TaskView[]>, { gone, come }: Changes): Map<TaskStatus, TaskView[]> {
  const byColumn = new Map(before);
  const copied = new Set<TaskStatus>();
  const leaving = new Set(gone);
  for (const task of gone) {
    const status = columnOf(task.status);
    const list = byColumn.get(status);
    if (list === undefined || copied.has(status)) continue;
    byColumn.set(status, list.filter((t) => !leaving.has(t)));
    copied.add(status);
  }
  for (const task of come) {
    const status = columnOf(task.status);
    let list = byColumn.get(status);
    if (list === undefined) continue; // no column shows it, as `columns` shows none
    if (!copied.has(status)) {
      list = [...list];
      byColumn.set(status, list);
      copied.add(status);
    }
    list.splice(sortedIndex(list, task), 0, task);
  }
  return byColumn;
}

/** Where `task` sorts in `sorted` (a column). */
function sortedIndex(sorted: TaskView[], task: TaskView): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (cardOrder(sorted[middle] as TaskView, task) < 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** `list` sorted, from `before` (the same column sorted, before a change) when it helps. */
function sortedAsBefore(list: TaskView[], before: TaskView[] | undefined): TaskView[] {
  if (before === undefined) return sortCards(list);
  const members = new Set(list);
  const kept = before.filter((task) => members.has(task));
  if (kept.length === list.length) return kept.length === before.length ? before : kept;
  const stayed = new Set(kept);
  const added = list.filter((task) => !stayed.has(task));
  // Many new cards (another filter, the first read): sorting them all is as quick.
  if (added.length > 64) return sortCards(list);
  for (const task of added) kept.splice(sortedIndex(kept, task), 0, task);
  return kept;
}

/**
 * The priority a card gets when dropped at `index` among `column` (sorted, without the card):
 * the priority of the card it lands before, so it sorts ahead of that card's equals when it
 * is older, or of the card above when it goes last. Priorities stay within 1..1000.
 */
export function priorityAt(column: TaskView[], index: number): number {
  const first = column[0];
  const last = column[column.length - 1];
  if (!first || !last) return DEFAULT_PRIORITY;
  if (index <= 0) return Math.max(1, first.priority - 1);
  return column[index]?.priority ?? Math.min(1000, last.priority + 1);
}

/** One line about a card's dependencies. */
export function dependencyLine(task: TaskView): string {
  if (task.dependencies.length === 0) return "";
  if (task.blocked_by.length === 0) return `after ${task.dependencies.join(", ")} (done)`;
  return `waits for ${task.blocked_by.join(", ")}`;
}

/** Who holds the files a ready task needs ("waits on files held by w1 (task-2)"), or "". */
export function filesLine(task: TaskView): string {
  const holds = task.waits_on_files ?? [];
  if (holds.length === 0) return "";
  const holders = holds.map((h) => (h.task ? `${h.agent} (${h.task})` : h.agent));
  return `waits on files held by ${holders.join(", ")}`;
}

/** Lease left, for people. */
export function leaseText(task: TaskView): string {
  if (task.stale) return "lease expired";
  const secs = task.lease_remaining_secs;
  if (secs === undefined) return "";
  if (secs >= 60) return `${Math.floor(secs / 60)}m left`;
  return `${secs}s left`;
}

/** Dependencies a new task may take without a cycle: any existing task, since it is new. For
 * an existing task, every task except itself and those that (transitively) depend on it. */
export function allowedDependencies(tasks: TaskView[], editing?: string): string[] {
  if (!editing) return tasks.map((t) => t.id);
  const dependents = new Set<string>([editing]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const t of tasks) {
      if (!dependents.has(t.id) && t.dependencies.some((d) => dependents.has(d))) {
        dependents.add(t.id);
        grew = true;
      }
    }
  }
  return tasks.filter((t) => !dependents.has(t.id)).map((t) => t.id);
}

/** How many cards a column shows before "show more": a board of 1,000 tasks stays light
 *  (each card is a drag source and a drop target) and the columns stay scannable. */
export const COLUMN_PAGE = 50;

/** The cards a column draws when it shows `shown` of them; the selected card is drawn even
 *  when it lies further down, so a selection never disappears. */
export function visibleCards(tasks: TaskView[], shown: number, selected: string | null): { cards: TaskView[]; hidden: number } {
  const cards = tasks.slice(0, shown);
  const extra = selected === null ? undefined : tasks.slice(shown).find((t) => t.id === selected);
  if (extra) cards.push(extra);
  return { cards, hidden: tasks.length - cards.length };
}

/** What the selected card waits for (its dependencies) and what waits for it (the tasks that
 *  depend on it), for highlighting both on the board. */
export function relations(tasks: TaskView[], selected: string | null): { waitsFor: Set<string>; waitedBy: Set<string> } {
  const waitsFor = new Set<string>();
  const waitedBy = new Set<string>();
  if (selected === null) return { waitsFor, waitedBy };
  for (const task of tasks) {
    if (task.id === selected) task.dependencies.forEach((d) => waitsFor.add(d));
    if (task.dependencies.includes(selected)) waitedBy.add(task.id);
  }
  return { waitsFor, waitedBy };
}

/** The board a window holding `previous` has after `update` (the backend's `BoardUpdate`):
 *  the tasks it did not send keep their objects, so what draws a card skips the cards whose
 *  task did not change (most of them, on a change a worker made to one task). `null` when the
 *  update does not fit the board held (its count differs): read the board whole then. */
export function withUpdate(previous: StatusReport | null, update: BoardUpdate): StatusReport | null {
  const report = update.report;
  if (update.base === null) return report;
  if (previous === null) return null;
  const sent = new Map(report.tasks.map((task) => [task.id, task]));
  const removed = new Set(update.removed);
  const tasks: TaskView[] = [];
  for (const task of previous.tasks) {
    if (removed.has(task.id)) continue;
    const changed = sent.get(task.id);
    tasks.push(changed ?? task);
    sent.delete(task.id);
  }
  // Those left are new, in the board's order.
  for (const task of report.tasks) if (sent.has(task.id)) tasks.push(task);
  if (update.order !== null) {
    const at = new Map(update.order.map((id, i) => [id, i]));
    tasks.sort((a, b) => (at.get(a.id) ?? 0) - (at.get(b.id) ?? 0));
  }
  return tasks.length === report.total ? { ...report, tasks } : null;
}
