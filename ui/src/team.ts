// The Team view's logic, apart from drawing: a transcript's events folded for reading (each
// tool call with its result), the spend chart's points, and budget bars. Pure, so it is
// unit-tested (team.test.ts).

import type { TranscriptEvent } from "./bindings/TranscriptEvent";
import type { SpendPoint } from "./bindings/SpendPoint";
import type { QueueEntry } from "./bindings/QueueEntry";
import type { QueueState } from "./bindings/QueueState";
import type { CoordinationReport } from "./bindings/CoordinationReport";

/** One entry of a transcript as read: text, a tool call with its result (when it came), an
 *  error, the final result, or a line of the supervisor's or the process's. */
export type Entry =
  | { kind: "text"; seq: number; text: string }
  | { kind: "tool"; seq: number; id: string; name: string; input: string; output: string | null; isError: boolean }
  | { kind: "error"; seq: number; text: string }
  | { kind: "result"; seq: number; text: string; isError: boolean; cost: number | null }
  | { kind: "note"; seq: number; text: string }
  /** How the attempt was started: shown folded, the agent's work coming first. */
  | { kind: "launch"; seq: number; command: string; workdir: string };

function shown(input: unknown): string {
  if (typeof input === "string") return input;
  return JSON.stringify(input, null, 2) ?? "";
}

/** Folds `events` into `entries` (a copy, with the new ones added): a tool result joins its
 *  call. Only events numbered after `after` are taken, so following a transcript appends each
 *  event once however it arrived (read, or pushed by the change feed). */
export function fold(entries: Entry[], events: TranscriptEvent[], after: number): Entry[] {
  const out = entries.slice();
  for (const event of events) {
    if (event.seq <= after) continue;
    switch (event.kind) {
      case "text":
        out.push({ kind: "text", seq: event.seq, text: event.text });
        break;
      case "tool_call":
        out.push({ kind: "tool", seq: event.seq, id: event.id, name: event.name, input: shown(event.input), output: null, isError: false });
        break;
      case "tool_result": {
        const at = callOf(out, event.id);
        const call = out[at];
        if (call?.kind === "tool") out[at] = { ...call, output: event.output, isError: event.is_error };
        else out.push({ kind: "note", seq: event.seq, text: `tool result: ${event.output}` });
        break;
      }
      case "error":
        out.push({ kind: "error", seq: event.seq, text: event.message });
        break;
      case "result":
        out.push({ kind: "result", seq: event.seq, text: event.text, isError: event.is_error, cost: event.cost_usd });
        break;
      case "line":
        if (event.stream === "stderr") out.push({ kind: "error", seq: event.seq, text: event.text });
        else out.push({ kind: "note", seq: event.seq, text: event.text });
        break;
      case "supervisor":
        out.push({ kind: "note", seq: event.seq, text: event.text });
        break;
      case "started":
        out.push({ kind: "launch", seq: event.seq, command: event.command, workdir: event.workdir });
        break;
      case "exited":
        out.push({
          kind: event.code === 0 ? "note" : "error",
          seq: event.seq,
          text: event.signal !== null ? `exited on signal ${event.signal}` : `exited with code ${event.code ?? "?"}`,
        });
        break;
      case "session":
        break;
    }
  }
  return out;
}

/** Where the tool call `id` is in `entries` (the latest of that id), or -1. */
function callOf(entries: Entry[], id: string): number {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i];
    if (e?.kind === "tool" && e.id === id) return i;
  }
  return -1;
}

/** A transcript as followed: the attempt shown (none before the first read), its entries, and
 *  the last event number taken (events are numbered 1, 2, 3… within an attempt). */
export interface Followed {
  attempt: number | null;
  entries: Entry[];
  after: number;
}

export const NOT_READ: Followed = { attempt: null, entries: [], after: 0 };

/** Takes `attempt`'s `events` into `state`, however they came: from a read of the transcript
 *  (`read`, everything after some number) or pushed by the change feed, in any order. Returns
 *  the new state, or `"read"` when pushed events cannot be taken without a read first: they
 *  belong to a newer attempt, or some before them were missed (the feed was not listening yet,
 *  or a read raced them). An older attempt's events change nothing. */
export function take(state: Followed, attempt: number, events: TranscriptEvent[], read: boolean): Followed | "read" {
  if (state.attempt !== null && attempt < state.attempt) return state;
  if (state.attempt !== attempt) {
    if (!read) return "read";
    return { attempt, entries: fold([], events, 0), after: lastSeq(events, 0) };
  }
  const fresh = events.filter((e) => e.seq > state.after);
  if (fresh.length === 0) return state;
  const first = Math.min(...fresh.map((e) => e.seq));
  if (first > state.after + 1 && !read) return "read";
  return { attempt, entries: fold(state.entries, fresh, state.after), after: lastSeq(fresh, state.after) };
}

/** The highest event number in `events`, or `after` when none is higher. */
export function lastSeq(events: TranscriptEvent[], after: number): number {
  return events.reduce((most, e) => Math.max(most, e.seq), after);
}

/** The spend over time as an SVG polyline's points in a `width` × `height` box (time across,
 *  dollars up, from zero); empty with fewer than one point. */
export function chartPoints(points: SpendPoint[], width: number, height: number): string {
  if (points.length === 0) return "";
  const times = points.map((p) => Date.parse(p.at));
  const first = Math.min(...times);
  const span = Math.max(1, Math.max(...times) - first);
  const top = Math.max(...points.map((p) => p.total_usd), 1e-9);
  // Spend only grows, in steps: up at each point, level until the next, level to the end.
  const xy: string[] = [];
  let level = height;
  points.forEach((p, i) => {
    const x = (((times[i] ?? first) - first) / span) * width;
    xy.push(`${x.toFixed(1)},${level.toFixed(1)}`);
    level = height - (p.total_usd / top) * height;
    xy.push(`${x.toFixed(1)},${level.toFixed(1)}`);
  });
  xy.push(`${width.toFixed(1)},${level.toFixed(1)}`);
  return xy.join(" ");
}

/** How full a budget is, 0 to 1 (over budget is 1). */
export function budgetShare(spent: number, budget: number | null): number | null {
  if (budget === null || budget <= 0) return null;
  return Math.min(1, spent / budget);
}

/** US dollars as the lead reads them: cents, or tenths of a cent below a dollar. */
export function usd(amount: number): string {
  return amount < 1 ? `$${amount.toFixed(3)}` : `$${amount.toFixed(2)}`;
}

/** One row of the merge queue as the Team view shows it: its place in line while it waits. */
export type QueueRow = { task: string; worker: string; state: QueueState; place: number | null; note: string };

/** The merge queue's entries (in the order tasks joined it) with the place of each waiting one:
 *  1 is next. A task being checked, landed, sent back or left has no place. */
export function queueRows(entries: QueueEntry[]): QueueRow[] {
  let place = 0;
  return entries.map((e) => ({
    task: e.task,
    worker: e.worker,
    state: e.state,
    place: e.state === "queued" ? ++place : null,
    note: e.note ?? "",
  }));
}

/** A queue state in words. */
export function queueStateText(state: QueueState): string {
  return state.replace("_", " ");
}

/** A run's coordination in a sentence: what landed, what it cost a landed task, how often the
 *  lead stepped in. */
export function coordinationSummary(report: CoordinationReport): string {
  const { run } = report;
  const perTask = run.cost_per_landed_task_usd === null ? "" : ` (${usd(run.cost_per_landed_task_usd)} a landed task)`;
  const times = (n: number, what: string) => `${n} ${what}${n === 1 ? "" : "s"}`;
  return `${times(run.tasks, "task")}, ${run.landed} landed; ${usd(run.cost_usd)}${perTask}; ${times(run.lead_interventions, "lead intervention")}, ${times(run.questions, "question")}, ${times(run.messages, "message")}.`;
}
