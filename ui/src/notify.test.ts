import { describe, expect, it } from "vitest";
import { noticeOf } from "./notify";
import type { ChangeEvent } from "./bindings/ChangeEvent";
import type { Question } from "./bindings/Question";

const question = (about: Question["about"]): Question => ({
  id: "q-3",
  agent: "cc1",
  task: "t1",
  text: "Which JSON library?",
  choices: [],
  about,
  asked_at: "2026-11-26T12:00:00Z",
  state: { state: "open" },
});

describe("noticeOf", () => {
  it("says who asks what, one notice per question", () => {
    const asked: ChangeEvent = { event: "question_asked", question: question({ kind: "question" }) };
    expect(noticeOf(asked)).toEqual({ title: "cc1 asks", body: "Which JSON library?", tag: "q-3" });
  });

  it("says an approval is one", () => {
    const asked: ChangeEvent = { event: "question_asked", question: question({ kind: "approval", tool: "Bash", input: {} }) };
    expect(noticeOf(asked)?.title).toBe("cc1 asks to run a tool");
  });

  it("says a plan waits for the lead's approval", () => {
    const asked: ChangeEvent = { event: "question_asked", question: question({ kind: "plan", plan: "plan-1", tasks: ["a", "b"] }) };
    expect(noticeOf(asked)?.title).toBe("cc1 asks you to approve its plan");
  });

  it("says nothing of other changes", () => {
    expect(noticeOf({ event: "master_plan_changed" })).toBeNull();
    expect(noticeOf({ event: "question_settled", question: question({ kind: "question" }) })).toBeNull();
  });
});
