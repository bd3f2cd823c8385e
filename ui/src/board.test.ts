import { describe, expect, it } from "vitest";
import { allowedDependencies, columns, dependencyLine, leaseText, moveFor, priorityAt, sortCards, visibleCards } from "./board";
import type { TaskView } from "./types";

function task(id: string, extra: Partial<TaskView> = {}): TaskView {
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

describe("moveFor: legal moves only", () => {
  it("claims a ready task as the lead, and refuses a blocked one with the reason", () => {
    expect(moveFor(task("a"), "claimed")).toEqual({ op: "claim", agent: "leader" });
    expect(moveFor(task("b", { blocked_by: ["a"], ready: false }), "claimed")).toEqual({ refused: "b waits for a" });
  });
  it("acts for the holder of a claimed or running task", () => {
    const held = task("a", { status: "claimed", claimed_by: "w1" });
    expect(moveFor(held, "in_progress")).toEqual({ op: "start", agent: "w1" });
    expect(moveFor(held, "available")).toEqual({ op: "release", agent: "w1" });
    expect(moveFor(held, "failed")).toEqual({ op: "fail", agent: "w1", needs: "reason" });
    const running = task("a", { status: "in_progress", claimed_by: "w2" });
    expect(moveFor(running, "done")).toEqual({ op: "complete", agent: "w2", needs: "summary" });
  });
  it("resets a failed or cancelled task, and refuses skipping steps or leaving done", () => {
    expect(moveFor(task("a", { status: "failed" }), "available")).toEqual({ op: "reset" });
    expect(moveFor(task("a", { status: "cancelled" }), "available")).toEqual({ op: "reset" });
    expect(moveFor(task("a"), "done")).toEqual({ refused: "a must be claimed first" });
    expect(moveFor(task("a", { status: "claimed" }), "done")).toEqual({ refused: "a must be started before it can be done" });
    expect(moveFor(task("a", { status: "done" }), "available")).toEqual({ refused: "a cannot move from done to available" });
    expect(moveFor(task("a", { status: "done" }), "done")).toEqual({ op: "none" });
  });
});

describe("ordering", () => {
  it("sorts by priority, then age, then id", () => {
    const sorted = sortCards([
      task("late", { priority: 2, created_at: "2026-11-22T11:00:00.000000Z" }),
      task("urgent", { priority: 1 }),
      task("early", { priority: 2, created_at: "2026-11-22T09:00:00.000000Z" }),
    ]);
    expect(sorted.map((t) => t.id)).toEqual(["urgent", "early", "late"]);
  });
  it("groups cancelled tasks with failed ones", () => {
    const board = columns([task("a", { status: "cancelled" }), task("b", { status: "done" })]);
    expect(board.get("failed")?.map((t) => t.id)).toEqual(["a"]);
    expect(board.get("done")?.map((t) => t.id)).toEqual(["b"]);
    expect(board.get("claimed")).toEqual([]);
  });
  it("gives a dropped card the priority of where it lands", () => {
    const column = [task("a", { priority: 2 }), task("b", { priority: 4 }), task("c", { priority: 7 })];
    expect(priorityAt(column, 0)).toBe(1);
    expect(priorityAt(column, 1)).toBe(4);
    expect(priorityAt(column, 3)).toBe(8);
    expect(priorityAt([], 0)).toBe(5);
    expect(priorityAt([task("x", { priority: 1 })], 0)).toBe(1);
  });
});

describe("dependency display", () => {
  it("says what a task waits for, or that its dependencies are done", () => {
    expect(dependencyLine(task("a"))).toBe("");
    expect(dependencyLine(task("b", { dependencies: ["a"], blocked_by: ["a"] }))).toBe("waits for a");
    expect(dependencyLine(task("b", { dependencies: ["a"] }))).toBe("after a (done)");
  });
  it("offers no dependency that would make a cycle", () => {
    const tasks = [task("a"), task("b", { dependencies: ["a"] }), task("c", { dependencies: ["b"] }), task("d")];
    expect(allowedDependencies(tasks, "a")).toEqual(["d"]);
    expect(allowedDependencies(tasks)).toEqual(["a", "b", "c", "d"]);
  });
  it("shows the lease left", () => {
    expect(leaseText(task("a", { lease_remaining_secs: 125 }))).toBe("2m left");
    expect(leaseText(task("a", { lease_remaining_secs: 9 }))).toBe("9s left");
    expect(leaseText(task("a", { stale: true }))).toBe("lease expired");
  });
});

describe("long columns", () => {
  const many = Array.from({ length: 120 }, (_, i) => task(`task-${i + 1}`));

  it("draw one page of cards and count the rest", () => {
    const { cards, hidden } = visibleCards(many, 50, null);
    expect(cards.map((c) => c.id)).toEqual(many.slice(0, 50).map((c) => c.id));
    expect(hidden).toBe(70);
  });

  it("keep a selected card drawn when it lies beyond the page", () => {
    const { cards, hidden } = visibleCards(many, 50, "task-99");
    expect(cards).toHaveLength(51);
    expect(cards[50]?.id).toBe("task-99");
    expect(hidden).toBe(69);
    expect(visibleCards(many, 50, "task-3").cards).toHaveLength(50);
  });

  it("show everything once the page covers the column", () => {
    expect(visibleCards(many.slice(0, 10), 50, null)).toEqual({ cards: many.slice(0, 10), hidden: 0 });
  });
});
