// Text for the Agents view, kept apart from React so it is unit-tested.
import type { AgentState } from "./bindings/AgentState";

const STATES: Record<AgentState, string> = {
  working: "Working",
  lease_running_out: "Lease running out",
  stale: "Stale",
  waiting_for_work: "Waiting for work",
  idle: "Idle",
  gone: "Gone",
};

export function agentStateText(state: AgentState): string {
  return STATES[state];
}

/** "1h 05m", "4m 10s", "12s", or "expired". */
export function leftText(secs: number): string {
  if (secs <= 0) return "expired";
  const h = Math.floor(secs / 3600);
  const m = Math.floor((secs % 3600) / 60);
  const s = secs % 60;
  if (h > 0) return `${h}h ${String(m).padStart(2, "0")}m`;
  if (m > 0) return `${m}m ${String(s).padStart(2, "0")}s`;
  return `${s}s`;
}

/** How long before `at` (the store's time) the agent was last heard from. */
export function lastHeard(seen: string | null, at: string): string {
  if (!seen) return "never";
  const secs = Math.max(0, Math.round((Date.parse(at) - Date.parse(seen)) / 1000));
  return secs < 5 ? "just now" : `${leftText(secs)} ago`;
}

/** A log line without its leading `[time] `: what the agent did. */
export function withoutTime(line: string): string {
  const end = line.startsWith("[") ? line.indexOf("] ") : -1;
  return end >= 0 ? line.slice(end + 2) : line;
}
