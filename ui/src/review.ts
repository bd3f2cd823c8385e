// The Review view's logic, apart from drawing: a large file's patch cut to its first lines, so
// a 5,000-line diff opens at once and is drawn whole only when asked. Pure, so it is
// unit-tested (review.test.ts).

/** Changed lines of a file drawn at first; more are drawn when the lead asks. */
export const LARGE_FILE_LINES = 1000;

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@(.*)$/;

/** `patch` (one file's unified diff, from its `diff --git` line) cut after `max` lines of its
 *  hunks' bodies, the last hunk's header counting what is kept, so it still parses as a diff.
 *  Returns the patch as it is when it has no more than `max` such lines. */
export function firstLines(patch: string, max: number): { patch: string; cut: boolean } {
  const lines = patch.split("\n");
  const out: string[] = [];
  let header = -1; // where the current hunk's header is in `out`
  let oldStart = 0;
  let newStart = 0;
  let tail = "";
  let olds = 0;
  let news = 0;
  let body = 0;
  const closeHunk = () => {
    if (header >= 0) out[header] = `@@ -${oldStart},${olds} +${newStart},${news} @@${tail}`;
  };
  for (const line of lines) {
    const hunk = HUNK.exec(line);
    if (hunk) {
      closeHunk();
      if (body >= max) return { patch: out.join("\n") + "\n", cut: true };
      header = out.length;
      oldStart = Number(hunk[1]);
      newStart = Number(hunk[2]);
      tail = hunk[3] ?? "";
      olds = news = 0;
      out.push(line);
      continue;
    }
    if (header < 0 || line.startsWith("\\")) {
      out.push(line); // the file's header lines; "\ No newline at end of file"
      continue;
    }
    if (line === "" && out.length === lines.length - 1) continue; // the patch's final newline
    if (body >= max) {
      closeHunk();
      return { patch: out.join("\n") + "\n", cut: true };
    }
    body += 1;
    if (line.startsWith("+")) news += 1;
    else if (line.startsWith("-")) olds += 1;
    else {
      olds += 1;
      news += 1;
    }
    out.push(line);
  }
  return { patch, cut: false };
}
