// The shapes the backend sends. They mirror baton-store's StatusReport and TaskView.

export type TaskStatus = "available" | "claimed" | "in_progress" | "done" | "failed" | "cancelled";

export interface TaskContext {
  files: string[];
  hints: string;
}

export interface Task {
  id: string;
  description: string;
  status: TaskStatus;
  priority: number;
  claimed_by: string | null;
  dependencies: string[];
  context: TaskContext;
  result: { output?: string | null; error?: string | null } | null;
  created_at: string | null;
  claimed_at: string | null;
  completed_at: string | null;
  started_at?: string | null;
  lease_expires_at?: string | null;
  attempts?: number;
  failure_reason?: string | null;
}

/** A task as the board shows it: the task plus what the store worked out about it. */
export interface TaskView extends Task {
  ready: boolean;
  blocked_by: string[];
  lease_remaining_secs: number | null;
  stale: boolean;
}

export interface StatusReport {
  goal: string | null;
  total: number;
  counts: Record<TaskStatus, number>;
  ready: number;
  stale: number;
  tasks: TaskView[];
}
