import { describe, expect, it } from "vitest";
import { pieces } from "./review";

const header = "diff --git a/a.rs b/a.rs\nindex 1..2 100644\n--- a/a.rs\n+++ b/a.rs\n";
const added = (n: number) => Array.from({ length: n }, (_, i) => `+line ${i + 1}`).join("\n");

describe("pieces", () => {
  it("keeps a patch within one piece as it is", () => {
    const patch = `${header}@@ -1,2 +1,2 @@ fn main\n-old\n+new\n same\n`;
    expect(pieces(patch, 3)).toEqual({ pieces: [patch], continued: [false], cut: false });
  });

  it("cuts a long hunk after the limit and counts what it keeps in its header", () => {
    const { pieces: out, cut } = pieces(`${header}@@ -0,0 +1,10 @@\n${added(10)}\n`, 100, 4);
    expect(cut).toBe(true);
    expect(out).toEqual([`${header}@@ -0,0 +1,4 @@\n+line 1\n+line 2\n+line 3\n+line 4\n`]);
  });

  it("splits a long hunk into pieces that number their lines where the last one stopped", () => {
    const { pieces: out, continued, cut } = pieces(`${header}@@ -0,0 +1,5 @@\n${added(5)}\n`, 2);
    expect(cut).toBe(false);
    expect(out).toEqual([
      `${header}@@ -0,0 +1,2 @@\n+line 1\n+line 2\n`,
      `${header}@@ -0,0 +3,2 @@\n+line 3\n+line 4\n`,
      `${header}@@ -0,0 +5,1 @@\n+line 5\n`,
    ]);
    expect(continued).toEqual([false, true, true]);
  });

  it("counts context on both sides, keeps a no-newline marker with its line and drops hunks after the limit", () => {
    const patch = `${header}@@ -1,3 +1,3 @@ fn f\n a\n-b\n+B\n c\n@@ -10,1 +10,1 @@\n-x\n\\ No newline at end of file\n+y\n`;
    expect(pieces(patch, 100, 3)).toEqual({ pieces: [`${header}@@ -1,2 +1,2 @@ fn f\n a\n-b\n+B\n`], continued: [false], cut: true });
    const split = pieces(patch, 3);
    expect(split.pieces).toEqual([
      `${header}@@ -1,2 +1,2 @@ fn f\n a\n-b\n+B\n`,
      `${header}@@ -3,1 +3,1 @@ fn f\n c\n@@ -10,1 +10,1 @@\n-x\n\\ No newline at end of file\n+y\n`,
    ]);
    expect(split.continued).toEqual([false, true]);
  });

  it("gives a patch without hunks (a mode change) as one piece", () => {
    const patch = "diff --git a/x b/x\nold mode 100644\nnew mode 100755\n";
    expect(pieces(patch, 10)).toEqual({ pieces: [patch], continued: [false], cut: false });
  });
});
