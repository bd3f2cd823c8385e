// The Review view's logic, apart from drawing: a file's patch cut into pieces of a few hundred
// lines, each a patch of its own, so the first piece is drawn at once and the next ones in the
// frames after it (the diff component draws a patch whole, at about a millisecond a line here);
// a large file is cut after its first lines and drawn whole only when asked. Pure, so it is
// unit-tested (review.test.ts).

/** Changed lines of a file drawn at first; more are drawn when the lead asks. */
export const LARGE_FILE_LINES = 1000;

/** Lines of a piece: what is drawn in one frame. */
export const PIECE_LINES = 200;

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@(.*)$/;

interface Hunk {
  oldStart: number;
  newStart: number;
  /** What follows the header's second `@@` (git's function context). */
  tail: string;
  lines: string[];
}

/** `patch` (one file's unified diff, from its `diff --git` line) as pieces of at most `size`
 *  lines of its hunks' bodies, `max` lines in all. Each piece is a patch of its own: the file's
 *  header lines, then its part of the hunks, each hunk header counting what the piece holds (a
 *  piece that goes on with the hunk before it says so in `continued`). `cut` says lines were
 *  left out after `max`. */
export function pieces(patch: string, size: number, max = Infinity): { pieces: string[]; continued: boolean[]; cut: boolean } {
  const { header, hunks } = parse(patch);
  const out: string[][] = [];
  const continued: boolean[] = [];
  let current: string[] | null = null;
  let inPiece = 0;
  let total = 0;
  let cut = false;
  for (const hunk of hunks) {
    let olds = hunk.oldStart;
    let news = hunk.newStart;
    let i = 0;
    while (i < hunk.lines.length) {
      if (total >= max) {
        cut = true;
        break;
      }
      if (current === null || inPiece >= size) {
        current = [...header];
        out.push(current);
        continued.push(i > 0);
        inPiece = 0;
      }
      const room = Math.min(size - inPiece, max - total);
      const run: string[] = [];
      let oldCount = 0;
      let newCount = 0;
      let body = 0;
      for (; i < hunk.lines.length; i++) {
        const line = hunk.lines[i] ?? "";
        if (body >= room && !line.startsWith("\\")) break;
        run.push(line);
        if (line.startsWith("\\")) continue; // "\ No newline at end of file"
        body += 1;
        if (line.startsWith("+")) newCount += 1;
        else if (line.startsWith("-")) oldCount += 1;
        else {
          oldCount += 1;
          newCount += 1;
        }
      }
      current.push(`@@ -${olds},${oldCount} +${news},${newCount} @@${hunk.tail}`, ...run);
      olds += oldCount;
      news += newCount;
      inPiece += body;
      total += body;
    }
    if (cut) break;
  }
  if (out.length === 0) return { pieces: [patch], continued: [false], cut: false };
  return { pieces: out.map((lines) => lines.join("\n") + "\n"), continued, cut };
}

function parse(patch: string): { header: string[]; hunks: Hunk[] } {
  const header: string[] = [];
  const hunks: Hunk[] = [];
  const lines = patch.split("\n");
  if (lines[lines.length - 1] === "") lines.pop(); // the patch's final newline
  for (const line of lines) {
    const hunk = HUNK.exec(line);
    if (hunk) hunks.push({ oldStart: Number(hunk[1]), newStart: Number(hunk[2]), tail: hunk[3] ?? "", lines: [] });
    else (hunks[hunks.length - 1]?.lines ?? header).push(line);
  }
  return { header, hunks };
}
