// The backend's commands, typed. One function per IPC command; the names and arguments are
// the CLI's.

import { invoke } from "@tauri-apps/api/core";
import { listen, type UnlistenFn } from "@tauri-apps/api/event";
import type {
  Aggregate,
  BrowserRecord,
  CommandError,
  HandoffGraph,
  ListedBrowser,
  LogLine,
  PageState,
  ProjectInfo,
  RecentProject,
  Screenshot,
  StatusReport,
  Task,
} from "./types";

export type { BrowserRecord, ProjectInfo };

/** The error's kind (`not_initialized`, `invalid_transition`, …), if it is a command error. */
export function errorKind(error: unknown): string | null {
  if (typeof error === "object" && error !== null && "kind" in error) {
    return String((error as CommandError).kind);
  }
  return null;
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
  recentProjects: () => invoke<RecentProject[]>("recent_projects"),
  pickFolder: () => invoke<string | null>("pick_folder"),
  leaderInit: (path: string, goal: string) => invoke<ProjectInfo>("leader_init", { path, goal }),
  status: () => invoke<StatusReport>("status"),
  addTask: (task: { description: string; priority: number | null; depends: string[]; files: string[]; hints: string }) =>
    invoke<Task>("add_task", task),
  editTask: (task: string, change: { description?: string; priority?: number; depends?: string[]; files?: string[]; hints?: string }) =>
    invoke<Task>("edit_task", {
      task,
      description: change.description ?? null,
      priority: change.priority ?? null,
      depends: change.depends ?? null,
      files: change.files ?? null,
      hints: change.hints ?? null,
    }),
  claim: (agent: string) => invoke<Task | null>("claim", { agent }),
  start: (agent: string, task: string) => invoke<Task>("start", { agent, task }),
  complete: (agent: string, task: string, summary: string) =>
    invoke<Task>("complete", { agent, task, summary, modified: [], created: [] }),
  fail: (agent: string, task: string, reason: string) => invoke<Task>("fail", { agent, task, reason }),
  release: (agent: string, task: string) => invoke<Task>("release", { agent, task }),
  reset: (task: string) => invoke<Task>("reset", { task, force: false }),
  aggregate: () => invoke<Aggregate>("aggregate"),
  masterPlan: () => invoke<string>("master_plan"),
  discoveries: () => invoke<string>("discoveries"),
  taskResult: (task: string) => invoke<string>("task_result", { task }),
  handoffGraph: () => invoke<HandoffGraph>("handoff_graph"),
  boardPainted: () => invoke<null>("board_painted"),
  boardUpdated: () => invoke<null>("board_updated"),
  browserSessionStart: (url: string) => invoke<BrowserRecord>("browser_session_start", { url, signal: null }),
  browserSessionFinish: () => invoke<null>("browser_session_finish"),
  browserSession: () => invoke<BrowserRecord | null>("browser_session"),
  browserList: () => invoke<ListedBrowser[]>("browser_list"),
  browserShow: (port: number) => invoke<PageState>("browser_show", { port }),
  browserNavigate: (port: number, url: string) => invoke<PageState>("browser_navigate", { port, url }),
  browserReload: (port: number) => invoke<PageState>("browser_reload", { port }),
  browserScreenshot: (port: number) => invoke<Screenshot>("browser_screenshot", { port }),
  logs: (agent: string | null, lines: number) => invoke<LogLine[]>("logs", { agent, lines }),
};

/** A change-feed event as the backend sends it (`baton-live`'s `ChangeEvent`): its kind is
 *  `event` (`tasks_changed`, `orchestration_changed`, `browser_added`, …). */
export interface ChangeEvent {
  event: string;
}

/** Calls `onChange` with every change in `.coordination/`. */
export function onChange(onChange: (change: ChangeEvent) => void): Promise<UnlistenFn> {
  return listen<ChangeEvent>("baton-change", (e) => onChange(e.payload));
}

/** Calls `onStart` when the tray's "Start manual session" is chosen. */
export function onStartSession(onStart: () => void): Promise<UnlistenFn> {
  return listen("baton-start-session", () => onStart());
}
