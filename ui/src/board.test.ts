import { describe, expect, it } from "vitest";
import { allowedDependencies, changesBetween, columns, phoneColumns, shownColumns, dependencyLine, filesLine, leaseText, priorityAt, relations, sortCards, visibleCards, withUpdate } from "./board";
import { taskView } from "./testing";
import type { StatusReport, TaskStatus, TaskView } from "./types";
import type { BoardUpdate } from "./bindings/BoardUpdate";

const task = taskView;

describe("ordering", () => {
  it("sorts by priority, then age, then id", () => {
    const sorted = sortCards([
      task("late", { priority: 2, created_at: "2026-11-22T11:00:00.000000Z" }),
      task("urgent", { priority: 1 }),
      task("early", { priority: 2, created_at: "2026-11-22T09:00:00.000000Z" }),
    ]);
    expect(sorted.map((t) => t.id)).toEqual(["urgent", "early", "late"]);
  });
  it("sorts a column from the one before a change as it sorts it afresh", () => {
    // A seeded board changed at random: cards changed (new objects), added, removed, moved.
    let seed = 7;
    const roll = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const statuses: TaskStatus[] = ["available", "claimed", "done"];
    const status = () => statuses[roll(3)] ?? "available";
    let board: TaskView[] = Array.from({ length: 300 }, (_, i) =>
      task(`t-${i}`, { priority: 1 + roll(3), status: status(), created_at: `2026-11-2${roll(3)}T09:00:00.000000Z` }),
    );
    let next = 300;
    let before = { tasks: board, byColumn: columns(board) };
    let reused = 0;
    for (let step = 0; step < 200; step++) {
      const changed = roll(4);
      const at = roll(board.length);
      const was = board[at] as TaskView;
      if (step % 25 === 24) {
        // Many cards at once, or another order: sorted from the columns before, not card by card.
        board = step % 50 === 49 ? [...board].reverse() : board.map((t) => (roll(2) === 0 ? { ...t, status: status() } : t));
      } else if (changed === 0) board = [...board, task(`t-${next++}`, { priority: 1 + roll(3) })];
      else if (changed === 1) board = board.filter((_, i) => i !== at);
      else if (changed === 2) board = board.map((t, i) => (i === at ? { ...was, status: status() } : t));
      else board = board.map((t, i) => (i === at ? { ...was, priority: 1 + roll(3) } : t));
      const after = columns(board, before);
      const afresh = columns(board);
      for (const [status, list] of afresh) expect(after.get(status)?.map((t) => t.id)).toEqual(list.map((t) => t.id));
      for (const [status, list] of after) if (list === before.byColumn.get(status)) reused++;
      before = { tasks: board, byColumn: after };
    }
    // The columns a change did not touch are the arrays they were.
    expect(reused).toBeGreaterThan(300);
  });
  it("finds the cards a change took out of a board and put into it, or says there were too many", () => {
    let seed = 11;
    const roll = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    let board: TaskView[] = Array.from({ length: 50 }, (_, i) => task(`t-${i}`));
    let next = 50;
    for (let step = 0; step < 300; step++) {
      let after = board;
      for (let edit = 1 + roll(4); edit > 0; edit--) {
        const at = roll(after.length + 1);
        const kind = roll(3);
        if (kind === 0) after = [...after.slice(0, at), task(`t-${next++}`), ...after.slice(at)];
        else if (kind === 1) after = after.filter((_, i) => i !== at);
        else after = after.map((t, i) => (i === at ? { ...t } : t));
      }
      const found = changesBetween(board, after, 1000);
      expect(found).not.toBeNull();
      const { gone, come } = found as { gone: TaskView[]; come: TaskView[] };
      // What is left of the board before, and what came, is the board after: the same cards.
      const left = board.filter((t) => !gone.includes(t));
      // (By identity: a card changed is another object, equal or not.)
      expect(after.every((t) => left.includes(t) || come.includes(t))).toBe(true);
      expect([...left, ...come].every((t) => after.includes(t))).toBe(true);
      expect(left.length + come.length).toBe(after.length);
      expect(gone.every((t) => board.includes(t)) && come.every((t) => after.includes(t))).toBe(true);
      board = after;
    }
    expect(changesBetween(board, [...board].reverse(), 10)).toBeNull();
    expect(changesBetween(board, board, 0)).toEqual({ gone: [], come: [] });
  });
  it("groups cancelled tasks with failed ones", () => {
    const board = columns([task("a", { status: "cancelled" }), task("b", { status: "done" })]);
    expect(board.get("failed")?.map((t) => t.id)).toEqual(["a"]);
    expect(board.get("done")?.map((t) => t.id)).toEqual(["b"]);
    expect(board.get("claimed")).toEqual([]);
  });
  it("puts a plan's proposed tasks in a column of their own, first", () => {
    const board = columns([task("p", { status: "proposed" }), task("a")]);
    expect([...board.keys()][0]).toBe("proposed");
    expect(board.get("proposed")?.map((t) => t.id)).toEqual(["p"]);
    expect(board.get("available")?.map((t) => t.id)).toEqual(["a"]);
    expect(shownColumns(board)[0]?.status).toBe("proposed");
    expect(shownColumns(columns([task("a")])).map((c) => c.status)).not.toContain("proposed");
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
  it("says who holds the files a ready task needs", () => {
    expect(filesLine(task("a"))).toBe("");
    const held = task("b", {
      waits_on_files: [
        { agent: "w1", task: "task-2", paths: ["src/api/"], shared: false },
        { agent: "w3", paths: ["src/api/users.ts"], shared: false },
      ],
    });
    expect(filesLine(held)).toBe("waits on files held by w1 (task-2), w3");
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

describe("relations", () => {
  it("say what the selected card waits for and what waits for it", () => {
    const tasks = [
      task("a"),
      task("b"),
      task("c", { dependencies: ["a", "b"] }),
      task("d", { dependencies: ["c"] }),
      task("e", { dependencies: ["c", "a"] }),
    ];
    const { waitsFor, waitedBy } = relations(tasks, "c");
    expect([...waitsFor].sort()).toEqual(["a", "b"]);
    expect([...waitedBy].sort()).toEqual(["d", "e"]);
    expect(relations(tasks, null).waitsFor.size).toBe(0);
  });
});

describe("a board read again", () => {
  const report = (tasks: TaskView[], total = tasks.length): StatusReport => ({
    goal: "g",
    as_of: "2026-11-27T06:00:00Z",
    total,
    counts: { proposed: 0, available: total, claimed: 0, in_progress: 0, done: 0, failed: 0, cancelled: 0 },
    ready: total,
    stale: 0,
    tasks,
  });
  const update = (base: number | null, tasks: TaskView[], total: number, removed: string[] = [], order: string[] | null = null): BoardUpdate => ({
    generation: 2,
    base,
    report: report(tasks, total),
    removed,
    order,
  });
  const ids = (board: StatusReport | null) => board?.tasks.map((t) => t.id);

  it("keeps the objects of the tasks not sent, and takes the changed and new in the board's order", () => {
    const before = report([taskView("task-1"), taskView("task-2", { dependencies: ["task-1"], blocked_by: ["task-1"] }), taskView("task-4")]);
    const changed = taskView("task-1", { status: "done" });
    const added = [taskView("task-3"), taskView("task-5")];
    const after = withUpdate(before, update(1, [changed, ...added], 5));
    expect(ids(after)).toEqual(["task-1", "task-2", "task-4", "task-3", "task-5"]);
    expect(after?.tasks[0]).toBe(changed);
    expect(after?.tasks[1]).toBe(before.tasks[1]);
    expect(after?.tasks[2]).toBe(before.tasks[2]);
    expect(after?.counts.available).toBe(5);
  });

  it("drops the tasks gone and puts them in the order sent when there is one", () => {
    const before = report([taskView("a"), taskView("b"), taskView("c"), taskView("d")]);
    expect(ids(withUpdate(before, update(1, [], 3, ["b"])))).toEqual(["a", "c", "d"]);
    const moved = withUpdate(before, update(1, [taskView("e")], 4, ["a"], ["d", "e", "c", "b"]));
    expect(ids(moved)).toEqual(["d", "e", "c", "b"]);
    expect(moved?.tasks[0]).toBe(before.tasks[3]);
  });

  it("takes a whole board as it is, and says when an update does not fit the board held", () => {
    const whole = update(null, [taskView("task-1")], 1);
    expect(withUpdate(null, whole)).toBe(whole.report);
    expect(withUpdate(report([taskView("x")]), whole)).toBe(whole.report);
    // Against a board this window does not hold: read it whole.
    expect(withUpdate(null, update(1, [], 1))).toBeNull();
    expect(withUpdate(report([taskView("task-1")]), update(1, [], 2))).toBeNull();
  });
});

describe("the board on a phone", () => {
  it("shows what needs the lead first and no empty column", () => {
    const board = columns([
      task("done-1", { status: "done" }),
      task("ready", { status: "available" }),
      task("broke", { status: "failed" }),
      task("gone", { status: "cancelled" }),
      task("plan", { status: "proposed" }),
    ]);
    expect(phoneColumns(board).map((c) => c.status)).toEqual(["failed", "proposed", "available", "done"]);
    expect(phoneColumns(columns([]))).toEqual([]);
  });
});

