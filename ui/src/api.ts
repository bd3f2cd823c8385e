// The backend's commands, typed. One function per IPC command; the names and arguments are
// the CLI's.

import { invoke } from "@tauri-apps/api/core";
import { listen, type UnlistenFn } from "@tauri-apps/api/event";
import type { HandoffGraph, StatusReport, Task } from "./types";

export interface ProjectInfo {
  path: string;
  goal: string | null;
}

/** A browser in the registry (baton-live's BrowserRecord). */
export interface BrowserRecord {
  port: number;
  pid: number;
  owner: string;
  headless: boolean;
  started_at: string;
  cdp_endpoint: string;
}

/** The error every command rejects with. */
export interface CommandError {
  kind: string;
  message: string;
}

export function errorMessage(error: unknown): string {
  if (typeof error === "object" && error !== null && "message" in error) {
    return String((error as CommandError).message);
  }
  return String(error);
}

export const api = {
  projectInfo: () => invoke<ProjectInfo | null>("project_info"),
  openProject: (path: string) => invoke<ProjectInfo>("open_project", { path }),
  leaderInit: (path: string, goal: string) => invoke<ProjectInfo>("leader_init", { path, goal }),
  status: () => invoke<StatusReport>("status"),
  addTask: (task: { description: string; priority: number | null; depends: string[]; files: string[]; hints: string }) =>
    invoke<Task>("add_task", task),
  editTask: (task: string, change: { priority?: number; description?: string }) =>
    invoke<Task>("edit_task", { task, description: change.description ?? null, priority: change.priority ?? null, depends: null, files: null, hints: null }),
  claim: (agent: string) => invoke<Task | null>("claim", { agent }),
  start: (agent: string, task: string) => invoke<Task>("start", { agent, task }),
  complete: (agent: string, task: string, summary: string) =>
    invoke<Task>("complete", { agent, task, summary, modified: [], created: [] }),
  fail: (agent: string, task: string, reason: string) => invoke<Task>("fail", { agent, task, reason }),
  release: (agent: string, task: string) => invoke<Task>("release", { agent, task }),
  reset: (task: string) => invoke<Task>("reset", { task, force: false }),
  aggregate: () => invoke<{ path: string; total: number; done: number; failed: number; unfinished: number }>("aggregate"),
  masterPlan: () => invoke<string>("master_plan"),
  discoveries: () => invoke<string>("discoveries"),
  taskResult: (task: string) => invoke<string>("task_result", { task }),
  handoffGraph: () => invoke<HandoffGraph>("handoff_graph"),
  boardPainted: () => invoke<null>("board_painted"),
  browserSessionStart: (url: string) => invoke<BrowserRecord>("browser_session_start", { url, signal: null }),
  browserSessionFinish: () => invoke<null>("browser_session_finish"),
  browserSession: () => invoke<BrowserRecord | null>("browser_session"),
  listBrowsers: () => invoke<(BrowserRecord & { alive: boolean })[]>("list_browsers"),
  logs: (agent: string | null, lines: number) => invoke<{ agent: string; line: string }[]>("logs", { agent, lines }),
};

/** Calls `onChange` whenever something changes in `.coordination/`. */
export function onChange(onChange: () => void): Promise<UnlistenFn> {
  return listen("baton-change", () => onChange());
}
