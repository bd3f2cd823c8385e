import { describe, expect, it } from "vitest";
import { pickerMatches } from "./picker";
import { taskView } from "./testing";

const task = (id: string, description: string) => taskView(id, { description });

describe("the dependency picker", () => {
  const tasks = Array.from({ length: 30 }, (_, i) => task(`task-${i + 1}`, i % 2 ? "Write the lexer" : "Write the parser"));
  const allowed = tasks.map((t) => t.id).filter((id) => id !== "task-3");

  it("finds tasks by id or words of their description, leaving out the chosen and the not allowed", () => {
    const { shown, more } = pickerMatches(allowed, tasks, ["task-1"], "parser", 100);
    expect(shown.map((t) => t.id)).toEqual(
      tasks.filter((t, i) => i % 2 === 0 && t.id !== "task-1" && t.id !== "task-3").map((t) => t.id),
    );
    expect(more).toBe(0);
    expect(pickerMatches(allowed, tasks, [], "task-3", 100).shown.map((t) => t.id)).toEqual(["task-30"]);
  });

  it("lists a few at a time and says how many more match", () => {
    const { shown, more } = pickerMatches(allowed, tasks, [], "", 12);
    expect(shown).toHaveLength(12);
    expect(more).toBe(29 - 12);
  });
});
