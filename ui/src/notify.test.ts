import { describe, expect, it } from "vitest";
import { keyBytes, noticeOf } from "./notify";
import { viewOfPath } from "./api";
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

describe("keyBytes", () => {
  it("decodes the server's base64url key, unpadded", () => {
    expect([...keyBytes("-_8")]).toEqual([0xfb, 0xff]);
    expect([...keyBytes("AQID")]).toEqual([1, 2, 3]);
  });
});

describe("viewOfPath", () => {
  it("opens the view a link names, and nothing for other paths", () => {
    expect(viewOfPath("/inbox")).toBe("inbox");
    expect(viewOfPath("/team/")).toBe("team");
    expect(viewOfPath("/")).toBeNull();
    expect(viewOfPath("/pair/ABC")).toBeNull();
    expect(viewOfPath("/browser")).toBeNull();
  });
});
