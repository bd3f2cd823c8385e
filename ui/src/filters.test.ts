import { describe, expect, it } from "vitest";
import { NO_FILTER, choices, countText, filterTasks, isActive, loadFilter, saveFilter } from "./filters";
import { taskView } from "./testing";
import type { TaskView } from "./types";

function card(id: string, over: Partial<TaskView> = {}): TaskView {
  return taskView(id, { ready: false, description: `Do ${id}`, created_at: null, ...over });
}

const board = [
  card("task-1", { description: "Write the parser", ready: true, priority: 1, context: { files: ["src/parse.rs"], hints: "" } }),
  card("task-2", { description: "Write the lexer", status: "in_progress", claimed_by: "w1" }),
  card("task-3", { description: "Document the parser", blocked_by: ["task-1"], dependencies: ["task-1"] }),
  card("task-4", { description: "Ship", status: "cancelled", claimed_by: "w2", priority: 1 }),
];
const ids = (tasks: TaskView[]) => tasks.map((t) => t.id);

describe("board filters", () => {
  it("keep every card when nothing is asked", () => {
    expect(isActive(NO_FILTER)).toBe(false);
    expect(ids(filterTasks(board, NO_FILTER))).toEqual(["task-1", "task-2", "task-3", "task-4"]);
  });

  it("find words in ids, descriptions and files, all words, any case", () => {
    expect(ids(filterTasks(board, { ...NO_FILTER, text: "PARSER" }))).toEqual(["task-1", "task-3"]);
    expect(ids(filterTasks(board, { ...NO_FILTER, text: "parser document" }))).toEqual(["task-3"]);
    expect(ids(filterTasks(board, { ...NO_FILTER, text: "parse.rs" }))).toEqual(["task-1"]);
  });

  it("narrow by owner, column, priority, readiness and blocker, together", () => {
    expect(ids(filterTasks(board, { ...NO_FILTER, owner: "w1" }))).toEqual(["task-2"]);
    expect(ids(filterTasks(board, { ...NO_FILTER, status: "failed" }))).toEqual(["task-4"]);
    expect(ids(filterTasks(board, { ...NO_FILTER, priority: 1 }))).toEqual(["task-1", "task-4"]);
    expect(ids(filterTasks(board, { ...NO_FILTER, readyNow: true }))).toEqual(["task-1"]);
    expect(ids(filterTasks(board, { ...NO_FILTER, blockedBy: "task-1" }))).toEqual(["task-3"]);
    expect(ids(filterTasks(board, { ...NO_FILTER, priority: 1, text: "ship" }))).toEqual(["task-4"]);
  });

  it("offer the owners, priorities and blockers the board has, and count", () => {
    expect(choices(board)).toEqual({ owners: ["w1", "w2"], priorities: [1, 5], blockers: ["task-1"] });
    expect(countText(2, 4, { ...NO_FILTER, owner: "w1" })).toBe("2 of 4");
    expect(countText(4, 4, NO_FILTER)).toBe("4");
  });

  it("are kept per project and survive a bad stored value", () => {
    const store = new Map<string, string>();
    const storage = {
      getItem: (k: string) => store.get(k) ?? null,
      setItem: (k: string, v: string) => void store.set(k, v),
      removeItem: (k: string) => void store.delete(k),
    };
    const mine = { ...NO_FILTER, text: "parser", readyNow: true };
    saveFilter(storage, "/p/one", mine);
    expect(loadFilter(storage, "/p/one")).toEqual(mine);
    expect(loadFilter(storage, "/p/two")).toEqual(NO_FILTER);
    store.set("baton.board-filter:/p/two", "{not json");
    expect(loadFilter(storage, "/p/two")).toEqual(NO_FILTER);
    saveFilter(storage, "/p/one", NO_FILTER);
    expect(store.size).toBe(1);
  });

  it("ask for the landed work without hiding a card, and a filter kept before it was asked for loads", () => {
    const landed = { ...NO_FILTER, landed: true };
    expect(isActive(landed)).toBe(true);
    expect(ids(filterTasks(board, landed))).toEqual(ids(board));
    const storage = { getItem: () => JSON.stringify({ text: "parser", readyNow: true }) };
    expect(loadFilter(storage, "/p/old")).toEqual({ ...NO_FILTER, text: "parser", readyNow: true });
  });
});
