import { describe, expect, it } from "vitest";
import { inertDeep, inertText } from "./inert";

describe("inert text", () => {
  it("writes out bidirectional overrides and controls, and keeps plain text and layout", () => {
    expect(inertText("report\u202Egnp.exe")).toBe("report\\u{202e}gnp.exe");
    expect(inertText("\u2066x\u2069")).toBe("\\u{2066}x\\u{2069}");
    expect(inertText("csi\u009B31m bell\u0007")).toBe("csi\\u{009b}31m bell\\u{0007}");
    const plain = "two lines\nand a\ttab, ünïcode, עברית";
    expect(inertText(plain)).toBe(plain);
  });

  it("reaches every string of an answer, however deep", () => {
    const answer = {
      questions: [{ id: "q-1", text: "Merge \u202Enoitcudorp?", choices: ["yes", "n\u202Eo"] }],
      count: 2,
      done: true,
      none: null,
    };
    expect(inertDeep(answer)).toEqual({
      questions: [{ id: "q-1", text: "Merge \\u{202e}noitcudorp?", choices: ["yes", "n\\u{202e}o"] }],
      count: 2,
      done: true,
      none: null,
    });
  });
});
