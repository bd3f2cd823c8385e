// The Markdown agents and the lead write (the master plan, results, discoveries) read as a page:
// headings, paragraphs, lists and code, with `code`, **strong** and *emphasis* inside a line.
// Parsed into plain data that React draws as elements, never as HTML: an agent's text cannot
// put markup or scripts in the page. What is not understood stays as the text it was.

export type Inline = { kind: "text" | "code" | "strong" | "em"; text: string };

export type Block =
  | { kind: "heading"; level: number; text: Inline[] }
  | { kind: "paragraph"; text: Inline[] }
  | { kind: "list"; ordered: boolean; items: Inline[][] }
  | { kind: "code"; text: string };

const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;
const BULLET = /^\s*[-*+]\s+(.*)$/;
const NUMBERED = /^\s*\d+[.)]\s+(.*)$/;
const FENCE = /^\s*(```|~~~)/;

/** `text` as blocks, in order. */
export function parseMarkdown(text: string): Block[] {
  const blocks: Block[] = [];
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  const at = (i: number): string => lines[i] ?? "";
  let paragraph: string[] = [];
  const endParagraph = () => {
    if (paragraph.length > 0) blocks.push({ kind: "paragraph", text: parseInline(paragraph.join(" ")) });
    paragraph = [];
  };
  // The list the previous line was an item of (or went on), if it was.
  const openList = (i: number): Extract<Block, { kind: "list" }> | null => {
    const last = blocks[blocks.length - 1];
    return last?.kind === "list" && paragraph.length === 0 && i > 0 && at(i - 1).trim() !== "" ? last : null;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = at(i);
    const fence = FENCE.exec(line)?.[1];
    if (fence) {
      endParagraph();
      const code: string[] = [];
      for (i++; i < lines.length && !at(i).trimStart().startsWith(fence); i++) code.push(at(i));
      blocks.push({ kind: "code", text: code.join("\n") });
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      endParagraph();
      blocks.push({ kind: "heading", level: (heading[1] ?? "#").length, text: parseInline(heading[2] ?? "") });
      continue;
    }
    const bullet = BULLET.exec(line)?.[1];
    const numbered = bullet === undefined ? NUMBERED.exec(line)?.[1] : undefined;
    const item = bullet ?? numbered;
    if (item !== undefined) {
      endParagraph();
      const ordered = numbered !== undefined;
      const list = openList(i);
      if (list && list.ordered === ordered) list.items.push(parseInline(item));
      else blocks.push({ kind: "list", ordered, items: [parseInline(item)] });
      continue;
    }
    if (line.trim() === "") {
      endParagraph();
      continue;
    }
    // A line indented under a list item goes on with it.
    const list = openList(i);
    const lastItem = list?.items[list.items.length - 1];
    if (lastItem && /^\s+\S/.test(line)) {
      lastItem.push({ kind: "text", text: ` ${line.trim()}` });
      continue;
    }
    paragraph.push(line.trim());
  }
  endParagraph();
  return blocks;
}

const INLINE = /(`[^`]+`|\*\*[^*]+\*\*|__[^_]+__|\*[^*\s][^*]*\*|_[^_\s][^_]*_)/;

/** One line's spans: `code`, **strong**, *emphasis*; the rest as text. */
export function parseInline(text: string): Inline[] {
  const out: Inline[] = [];
  for (const part of text.split(INLINE)) {
    if (part === "") continue;
    if (part.length > 2 && part.startsWith("`") && part.endsWith("`")) out.push({ kind: "code", text: part.slice(1, -1) });
    else if (part.length > 4 && (part.startsWith("**") || part.startsWith("__"))) out.push({ kind: "strong", text: part.slice(2, -2) });
    else if (part.length > 2 && /^([*_]).*\1$/.test(part)) out.push({ kind: "em", text: part.slice(1, -1) });
    else out.push({ kind: "text", text: part });
  }
  return out;
}
