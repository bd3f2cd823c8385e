// The backend's commands, typed. Every task-store, signal and orchestration operation goes
// through one IPC command, `operation`, by its catalogue name (the MCP tool's name); its
// request and result types are generated from the Rust types (bindings/Operations.ts), so the
// UI cannot drift from the CLI and MCP. The desktop's own commands (projects, browsers, the
// board's timing hooks) follow.

import { invoke as tauriInvoke } from "@tauri-apps/api/core";
import { listen, type UnlistenFn } from "@tauri-apps/api/event";
import type { BoardUpdate } from "./bindings/BoardUpdate";
import type { ChangeEvent } from "./bindings/ChangeEvent";
import { inertDeep } from "./inert";
import type { TeamUp } from "./bindings/TeamUp";
import type { Pairing } from "./bindings/Pairing";
import type { ServeState } from "./bindings/ServeState";
import type { Operations, OperationName } from "./bindings/Operations";
import type {
  BrowserRecord,
  ErrorBody,
  HandoffGraph,
  ListedBrowser,
  PageState,
  ProjectInfo,
  RecentProject,
  Screenshot,
  TaskStatus,
} from "./types";

export type { BrowserRecord, ChangeEvent, ProjectInfo };

/** Whether this page is served by `baton serve` to a browser rather than loaded by the desktop
 *  app: the same calls then go over HTTP (`/api/operation/NAME`, `/api/command/NAME`) and the
 *  change feed comes as server-sent events (`/api/feed`). */
export const served = typeof window !== "undefined" && !("__TAURI_INTERNALS__" in window);

/** POSTs `body` as JSON to the serving `baton`; rejects with its `ErrorBody`. */
async function post<T>(path: string, body: unknown): Promise<T> {
  const response = await fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    credentials: "same-origin",
    body: JSON.stringify(body ?? {}),
  });
  const value: unknown = await response.json().catch(() => ({ kind: "internal", message: `${response.status} ${response.statusText}` }));
  if (!response.ok) throw value;
  return inertDeep(value) as T;
}

/** A desktop command by its name: the app's IPC, or the server's `/api/command/NAME`. */
function invoke<T>(command: string, args: Record<string, unknown> = {}): Promise<T> {
  return served ? post<T>(`/api/command/${command}`, args) : tauriInvoke<T>(command, args).then(inertDeep);
}

/** The window's views. */
export type View = "board" | "graph" | "agents" | "team" | "inbox" | "review" | "browser";

/** The views a served page's path may name (a served page has no browser view). */
const PATH_VIEWS: readonly View[] = ["board", "graph", "agents", "team", "inbox", "review"];

/** The view a served page's path names (`/inbox`, `/team/`), if any. */
export function viewOfPath(path: string): View | null {
  const first = path.split("/").filter((part) => part !== "")[0] ?? "";
  return (PATH_VIEWS as readonly string[]).includes(first) ? (first as View) : null;
}

/** Runs the operation `name` with `request`; rejects with an `ErrorBody`. */
export function call<K extends OperationName>(name: K, request: Operations[K]["request"]): Promise<Operations[K]["output"]> {
  if (served) return post<Operations[K]["output"]>(`/api/operation/${name}`, request);
  return tauriInvoke<Operations[K]["output"]>("operation", { name, request }).then(inertDeep);
}

/** The error's kind (`not_initialized`, `illegal_transition`, …), if it is a command error. */
export function errorKind(error: unknown): string | null {
  if (typeof error === "object" && error !== null && "kind" in error) {
    return String((error as ErrorBody).kind);
  }
  return null;
}

export function errorMessage(error: unknown): string {
  if (typeof error === "object" && error !== null && "message" in error) {
    return String((error as ErrorBody).message);
  }
  return String(error);
}

const task = ({ task }: { task: Operations["task_start"]["output"]["task"] }) => task;

export const api = {
  projectInfo: () => invoke<ProjectInfo | null>("project_info"),
  /** Opens a project folder; `password` (never saved) for a folder that points to a database. */
  openProject: (path: string, password: string | null = null) => invoke<ProjectInfo>("open_project", { path, password }),
  /** Points `path` at project `project` in the PostgreSQL database at `url` and opens it. */
  connectDatabase: (path: string, url: string, project: string, password: string | null) =>
    invoke<ProjectInfo>("connect_database", { path, url, project, password }),
  recentProjects: () => invoke<RecentProject[]>("recent_projects"),
  /** The folder dialog, opened in `start` when that is a folder. */
  pickFolder: (start: string) => invoke<string | null>("pick_folder", { start: start.trim() || null }),
  leaderInit: (path: string, goal: string) => invoke<ProjectInfo>("leader_init", { path, goal }),
  /** The board (`landed`: with the work archived off it) for a window holding the board of
   *  generation `known`: what changed since, or the whole board (`withUpdate` in board.ts). */
  board: (landed: boolean, known: number | null) => invoke<BoardUpdate>("board", { all: landed, known }),
  /** How many questions and approvals wait for the lead. */
  openQuestions: () =>
    call("inbox_read", { agent: null, all: false, task: null, wait: false, timeout_seconds: null }).then(
      (inbox) => inbox.questions.filter((q) => q.state.state === "open").length,
    ),
  /** How many done tasks' branches are not in the lead's branch yet (the Review's count). */
  reviewsWaiting: () => call("review_waiting", {}).then((waiting) => waiting.tasks.length),
  addTask: (request: Operations["task_add"]["request"]) => call("task_add", request).then(task),
  editTask: (id: string, change: Omit<Partial<Operations["task_edit"]["request"]>, "task">) =>
    call("task_edit", {
      task: id,
      description: change.description ?? null,
      priority: change.priority ?? null,
      depends: change.depends ?? null,
      files: change.files ?? null,
      hints: change.hints ?? null,
      acceptance: change.acceptance ?? null,
    }).then(task),
  /** Which operation bringing task `id` to `to` takes (the library decides; a refusal rejects
   *  with the lifecycle's reason). Changes nothing. */
  planMove: (id: string, to: TaskStatus) => call("task_move", { task: id, to, text: null, dry_run: true }),
  /** Brings task `id` to `to`; `text` is the summary or reason the plan said it needs. */
  moveTask: (id: string, to: TaskStatus, text: string | null = null) =>
    call("task_move", { task: id, to, text, dry_run: false }),
  aggregate: () => call("aggregate", {}),
  /** Every agent's row for the Agents view. */
  team: () => call("agents_overview", {}),
  logs: (agent: string | null, lines: number) => call("logs", { agent, lines }).then((out) => out.lines),
  masterPlan: () => invoke<string>("master_plan"),
  discoveries: () => invoke<string>("discoveries"),
  taskResult: (id: string) => invoke<string>("task_result", { task: id }),
  handoffGraph: () => invoke<HandoffGraph>("handoff_graph"),
  boardPainted: () => invoke<null>("board_painted"),
  /** The view to open on (`BATON_DESKTOP_VIEW`), if the environment names one. */
  /** The view to open with: a served page's path names it (`/inbox#q-7`, a push's or a webhook's
   *  link; `/team`); the desktop says which (a tray menu's choice). */
  initialView: () => (served ? Promise.resolve(viewOfPath(window.location.pathname)) : invoke<View | null>("initial_view")),
  /** A served page's push subscription (`crates/serve/src/push`): the server's key to subscribe
   *  with and whether this device is subscribed; subscribing and unsubscribing it. */
  pushKey: () => invoke<{ key: string; subscribed: boolean }>("push_key"),
  pushSubscribe: (subscription: PushSubscriptionJSON) => invoke<{ subscribed: boolean }>("push_subscribe", { subscription }),
  pushUnsubscribe: () => invoke<{ subscribed: boolean }>("push_unsubscribe"),
  /** A served page's device: its scope (`lead` or `responder`). Served pages only. */
  whoami: () => invoke<{ id: string; scope: "lead" | "responder"; name: string }>("whoami"),
  /** Starts (or resizes) this machine's team in the background: the catalogue's `team_up`. */
  teamUp: (request: TeamUp) => call("team_up", request),
  boardUpdated: () => invoke<null>("board_updated"),
  /** For the benchmark: a measured view has drawn (printed by the app only when timing). */
  timingMark: (what: string) => invoke<null>("timing_mark", { what }),
  browserSessionStart: (url: string) => invoke<BrowserRecord>("browser_session_start", { url, signal: null }),
  browserSessionFinish: () => invoke<null>("browser_session_finish"),
  browserSession: () => invoke<BrowserRecord | null>("browser_session"),
  browserList: () => invoke<ListedBrowser[]>("browser_list"),
  browserShow: (port: number) => invoke<PageState>("browser_show", { port }),
  browserNavigate: (port: number, url: string) => invoke<PageState>("browser_navigate", { port, url }),
  browserReload: (port: number) => invoke<PageState>("browser_reload", { port }),
  browserScreenshot: (port: number) => invoke<Screenshot>("browser_screenshot", { port }),
  /** `baton serve` for the open project: whether it runs, and where. */
  serveStatus: () => invoke<ServeState>("serve_status"),
  serveStart: (listen: string) => invoke<ServeState>("serve_start", { listen }),
  serveStop: () => invoke<ServeState>("serve_stop"),
  /** A one-time link (and its QR code) pairing one phone as `scope`. */
  servePair: (scope: string) => invoke<Pairing>("serve_pair", { scope }),
};

/** Calls `onChange` with every change in `.coordination/` (`baton-live`'s `ChangeEvent`, as
 *  generated). */
export function onChange(onChange: (change: ChangeEvent) => void): Promise<UnlistenFn> {
  return onChanges((batch) => batch.forEach(onChange));
}

/** Calls `onBatch` with each batch of changes: the events of one look at the project (what one
 *  command changed), so what reads the board again on a change reads it once for all of them,
 *  at once, without waiting to see whether more follow. */
export function onChanges(onBatch: (batch: ChangeEvent[]) => void): Promise<UnlistenFn> {
  if (served) return Promise.resolve(followServed(onBatch));
  return listen<ChangeEvent[]>("baton-changes", (e) => onBatch(inertDeep(e.payload)));
}

/** The close codes `baton serve` ends a page's feed with (crates/serve/src/socket.rs). */
const FEED_LAGGED = 4000;
const FEED_REVOKED = 4001;

/** The listeners of this page's one served feed. */
const feedListeners = new Set<(batch: ChangeEvent[]) => void>();
let stopFeed: (() => void) | null = null;

/** A served page's listeners share one feed: the first opens it, the last closes it. */
function followServed(onBatch: (batch: ChangeEvent[]) => void): UnlistenFn {
  feedListeners.add(onBatch);
  stopFeed ??= openServedFeed((batch) => feedListeners.forEach((listener) => listener(batch)));
  return () => {
    feedListeners.delete(onBatch);
    if (feedListeners.size === 0) {
      stopFeed?.();
      stopFeed = null;
    }
  };
}

/** A served page follows the change feed over a WebSocket (which, unlike server-sent events,
 *  takes none of the six connections a browser keeps to a server, so many tabs can be open).
 *  Events missed (too slow to keep up, or the connection lost and opened again): the page
 *  reloads what it shows from the start. Revoked: the reload shows the pairing screen. */
function openServedFeed(onBatch: (batch: ChangeEvent[]) => void): () => void {
  const url = `${window.location.protocol === "https:" ? "wss" : "ws"}://${window.location.host}/api/feed`;
  let socket: WebSocket | null = null;
  let stopped = false;
  let failures = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const open = () => {
    const ws = new WebSocket(url);
    socket = ws;
    ws.onopen = () => {
      if (failures > 0) window.location.reload();
      failures = 0;
    };
    ws.onmessage = (e: MessageEvent<string>) => onBatch(inertDeep(JSON.parse(e.data) as ChangeEvent[]));
    ws.onclose = (e: CloseEvent) => {
      if (stopped) return;
      if (e.code === FEED_LAGGED || e.code === FEED_REVOKED) {
        window.location.reload();
        return;
      }
      // Lost (the server restarted, the network went): try again, less often each time; a
      // device no longer paired is shown the pairing screen.
      failures += 1;
      timer = setTimeout(() => {
        void api.whoami().then(open, (e: unknown) => (errorKind(e) === "not_paired" ? window.location.reload() : open()));
      }, Math.min(5000, 250 * 2 ** failures));
    };
  };
  open();
  return () => {
    stopped = true;
    clearTimeout(timer);
    socket?.close();
  };
}

/** Calls `onOpen` with a view's name when the tray asks for it (the questions line: inbox). */
export function onOpenView(onOpen: (view: View) => void): Promise<UnlistenFn> {
  if (served) return Promise.resolve(() => {});
  return listen<View>("baton-open-view", (e) => onOpen(e.payload));
}

/** Calls `onStart` when the tray's "Start manual session" is chosen. */
export function onStartSession(onStart: () => void): Promise<UnlistenFn> {
  if (served) return Promise.resolve(() => {});
  return listen("baton-start-session", () => onStart());
}
