import { describe, expect, it } from "vitest";
import { firstLines } from "./review";

const header = "diff --git a/a.rs b/a.rs\nindex 1..2 100644\n--- a/a.rs\n+++ b/a.rs\n";

describe("firstLines", () => {
  it("keeps a patch within the limit as it is", () => {
    const patch = `${header}@@ -1,2 +1,2 @@ fn main\n-old\n+new\n same\n`;
    expect(firstLines(patch, 3)).toEqual({ patch, cut: false });
  });

  it("cuts a long hunk and counts what it keeps in its header", () => {
    const added = Array.from({ length: 10 }, (_, i) => `+line ${i + 1}`).join("\n");
    const { patch, cut } = firstLines(`${header}@@ -0,0 +1,10 @@\n${added}\n`, 4);
    expect(cut).toBe(true);
    expect(patch).toBe(`${header}@@ -0,0 +1,4 @@\n+line 1\n+line 2\n+line 3\n+line 4\n`);
  });

  it("counts context on both sides and drops hunks after the limit", () => {
    const patch = `${header}@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n@@ -10,1 +10,1 @@\n-x\n+y\n`;
    const first = firstLines(patch, 3);
    expect(first.cut).toBe(true);
    expect(first.patch).toBe(`${header}@@ -1,2 +1,2 @@\n a\n-b\n+B\n`);
    const whole = firstLines(patch, 4);
    expect(whole.patch).toBe(`${header}@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n`);
  });
});
