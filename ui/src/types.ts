// The backend's payloads, generated from the Rust types (src-tauri/src/bindings.rs, ts-rs).
// Edit the Rust types, not these: a stale copy fails the Rust test suite.

export type { StatusReport } from "./bindings/StatusReport";
export type { Task } from "./bindings/Task";
export type { TaskContext } from "./bindings/TaskContext";
export type { TaskResult } from "./bindings/TaskResult";
export type { TaskStatus } from "./bindings/TaskStatus";
export type { TaskView } from "./bindings/TaskView";
export type { HandoffGraph } from "./bindings/HandoffGraph";
export type { GraphNode } from "./bindings/GraphNode";
export type { GraphEdge } from "./bindings/GraphEdge";
export type { Handoff } from "./bindings/Handoff";
export type { Aggregate } from "./bindings/Aggregate";
export type { BrowserRecord } from "./bindings/BrowserRecord";
export type { ListedBrowser } from "./bindings/ListedBrowser";
export type { PageState } from "./bindings/PageState";
export type { Screenshot } from "./bindings/Screenshot";
export type { ProjectInfo } from "./bindings/ProjectInfo";
export type { ErrorBody } from "./bindings/ErrorBody";
export type { ErrorKind } from "./bindings/ErrorKind";
export type { RecentProject } from "./bindings/RecentProject";
export type { LogLine } from "./bindings/LogLine";
