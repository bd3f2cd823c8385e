// What the UI's unit tests share: a board card with every field set, as the backend sends it.
import type { TaskView } from "./types";

/** An available, ready card `id` (description = id, priority 5), with `extra` over it. */
export function taskView(id: string, extra: Partial<TaskView> = {}): TaskView {
  return {
    id,
    description: id,
    status: "available",
    priority: 5,
    claimed_by: null,
    dependencies: [],
    context: { files: [], hints: "" },
    result: null,
    created_at: "2026-11-22T10:00:00.000000Z",
    claimed_at: null,
    completed_at: null,
    ready: true,
    blocked_by: [],
    stale: false,
    ...extra,
  };
}
