import { describe, expect, it } from "vitest";
import { budgetShare, chartPoints, coordinationSummary, fold, lastSeq, NOT_READ, queueRows, queueStateText, take, usd, type Followed } from "./team";
import type { TranscriptEvent } from "./bindings/TranscriptEvent";

const at = "2026-11-24T10:00:00Z";

describe("fold", () => {
  it("joins a tool result to its call, even across batches, and marks errors", () => {
    const first: TranscriptEvent[] = [
      { seq: 1, at, kind: "text", text: "Reading the file" },
      { seq: 2, at, kind: "tool_call", id: "t1", name: "Bash", input: { command: "ls" } },
    ];
    const entries = fold([], first, 0);
    expect(entries).toHaveLength(2);
    expect(entries[1]).toMatchObject({ kind: "tool", name: "Bash", output: null });
    const next = fold(entries, [
      { seq: 2, at, kind: "tool_call", id: "t1", name: "Bash", input: { command: "ls" } },
      { seq: 3, at, kind: "tool_result", id: "t1", output: "a.rs", is_error: true },
      { seq: 4, at, kind: "error", message: "rate limited" },
    ], lastSeq(first, 0));
    expect(next).toHaveLength(3);
    expect(next[1]).toMatchObject({ kind: "tool", output: "a.rs", isError: true });
    expect(next[2]).toMatchObject({ kind: "error", text: "rate limited" });
    expect(lastSeq(first, 0)).toBe(2);
    expect(lastSeq([], 7)).toBe(7);
    expect(entries[1]).toMatchObject({ output: null });
  });
});

describe("take", () => {
  const line = (seq: number, text = `line ${seq}`): TranscriptEvent => ({ seq, at, kind: "line", stream: "stdout", text });
  const texts = (f: Followed | "read") => (f === "read" ? "read" : f.entries.map((e) => ("text" in e ? e.text : "")));

  it("asks for a read when pushed events come before the first read or after a gap", () => {
    expect(take(NOT_READ, 1, [line(1)], false)).toBe("read");
    const read = take(NOT_READ, 1, [line(1), line(2)], true);
    expect(texts(read)).toEqual(["line 1", "line 2"]);
    expect(take(read as Followed, 1, [line(4)], false)).toBe("read");
    expect(texts(take(read as Followed, 1, [line(3)], false))).toEqual(["line 1", "line 2", "line 3"]);
  });

  it("takes each event once whichever of the read and the push comes first", () => {
    const read = take(NOT_READ, 1, [line(1)], true) as Followed;
    const pushed = take(read, 1, [line(2), line(3)], false) as Followed;
    // A read made before the push answers after it: nothing is lost or doubled.
    const late = take(pushed, 1, [line(1), line(2)], true);
    expect(texts(late)).toEqual(["line 1", "line 2", "line 3"]);
    expect((late as Followed).after).toBe(3);
    expect(take(pushed, 1, [line(2), line(3)], false)).toBe(pushed);
  });

  it("starts over for a newer attempt and ignores an older one", () => {
    const first = take(NOT_READ, 1, [line(1, "one")], true) as Followed;
    expect(take(first, 2, [line(1, "two")], false)).toBe("read");
    const second = take(first, 2, [line(1, "two")], true) as Followed;
    expect(texts(second)).toEqual(["two"]);
    expect(take(second, 1, [line(2, "late")], false)).toBe(second);
    expect(take(second, 1, [line(1, "old read")], true)).toBe(second);
  });
});

describe("chart and budget", () => {
  it("draws spend from zero up to the highest total", () => {
    const points = chartPoints(
      [
        { at: "2026-11-24T10:00:00Z", total_usd: 1 },
        { at: "2026-11-24T10:10:00Z", total_usd: 2 },
      ],
      100,
      20,
    );
    // Steps: up to $1 at the start, level, up to $2 ten minutes on, level to the end.
    expect(points).toBe("0.0,20.0 0.0,10.0 100.0,10.0 100.0,0.0 100.0,0.0");
    expect(chartPoints([], 100, 20)).toBe("");
    // One point: a level at what was spent, not a line across the chart from its corner.
    expect(chartPoints([{ at: "2026-11-24T10:00:00Z", total_usd: 1 }], 100, 20)).toBe("0.0,20.0 0.0,0.0 100.0,0.0");
  });

  it("fills a budget bar to at most full, and formats dollars", () => {
    expect(budgetShare(0.5, 2)).toBe(0.25);
    expect(budgetShare(3, 2)).toBe(1);
    expect(budgetShare(3, null)).toBeNull();
    expect(usd(0.0123)).toBe("$0.012");
    expect(usd(12.345)).toBe("$12.35");
  });
});

describe("merge queue", () => {
  it("numbers the waiting tasks in the order they joined and gives the others their state", () => {
    const rows = queueRows([
      { task: "a", worker: "ex1", state: "landed", note: "in main (abc, 1 file)", returns: 0 },
      { task: "b", worker: "ex2", state: "checking", returns: 0 },
      { task: "c", worker: "ex1", state: "queued", returns: 1 },
      { task: "d", worker: "ex3", state: "queued", returns: 0 },
      { task: "e", worker: "ex2", state: "sent_back", note: "the check exited 1", returns: 1 },
    ]);
    expect(rows.map((r) => r.place)).toEqual([null, null, 1, 2, null]);
    expect(rows[0]?.note).toBe("in main (abc, 1 file)");
    expect(rows[1]?.note).toBe("");
    expect(queueStateText("sent_back")).toBe("sent back");
    expect(queueStateText("not_landed")).toBe("not landed");
  });
});

describe("coordinationSummary", () => {
  const usage = { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_creation_tokens: 0, cost_usd: 0, turns: 0 };
  const run = { tasks: 5, landed: 4, cost_usd: 2, cost_per_landed_task_usd: 0.5, lead_interventions: 1, questions: 1, messages: 0, tokens: 0 };
  it("says what landed, what a landed task cost and how often the lead stepped in", () => {
    expect(coordinationSummary({ tasks: [], roles: [], run })).toBe("5 tasks, 4 landed; $2.00 ($0.500 a landed task); 1 lead intervention, 1 question, 0 messages.");
  });
  it("says no cost per task when nothing landed", () => {
    const none = { ...run, landed: 0, cost_per_landed_task_usd: null, cost_usd: 0.25 };
    expect(coordinationSummary({ tasks: [], roles: [{ role: "work", attempts: 1, usage, token_share: null }], run: none })).toBe(
      "5 tasks, 0 landed; $0.250; 1 lead intervention, 1 question, 0 messages.",
    );
  });
});
