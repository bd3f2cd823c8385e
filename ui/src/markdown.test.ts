import { describe, expect, it } from "vitest";
import { parseInline, parseMarkdown } from "./markdown";

describe("markdown", () => {
  it("reads a master plan's headings, paragraphs, lists and code", () => {
    const plan = "# Plan\n\nThe API first,\nthen the UI.\n\n## Tasks\n- `api`: the **endpoints**\n- ui: *after* api\n  and its tests\n\n1. one\n2. two\n\n```\ncargo test\n```\n";
    expect(parseMarkdown(plan)).toEqual([
      { kind: "heading", level: 1, text: [{ kind: "text", text: "Plan" }] },
      { kind: "paragraph", text: [{ kind: "text", text: "The API first, then the UI." }] },
      { kind: "heading", level: 2, text: [{ kind: "text", text: "Tasks" }] },
      {
        kind: "list",
        ordered: false,
        items: [
          [{ kind: "code", text: "api" }, { kind: "text", text: ": the " }, { kind: "strong", text: "endpoints" }],
          [{ kind: "text", text: "ui: " }, { kind: "em", text: "after" }, { kind: "text", text: " api" }, { kind: "text", text: " and its tests" }],
        ],
      },
      { kind: "list", ordered: true, items: [[{ kind: "text", text: "one" }], [{ kind: "text", text: "two" }]] },
      { kind: "code", text: "cargo test" },
    ]);
  });

  it("keeps markup an agent wrote as text, never as HTML", () => {
    const blocks = parseMarkdown('<img src=x onerror="alert(1)"> and <script>x</script>');
    expect(blocks).toEqual([{ kind: "paragraph", text: [{ kind: "text", text: '<img src=x onerror="alert(1)"> and <script>x</script>' }] }]);
    expect(parseInline("a * b * c and 2*3")).toEqual([{ kind: "text", text: "a * b * c and 2*3" }]);
  });

  it("leaves an unclosed fence's code to the end", () => {
    expect(parseMarkdown("```\nfn main() {}")).toEqual([{ kind: "code", text: "fn main() {}" }]);
  });
});
