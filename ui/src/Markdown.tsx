import { Fragment, type ReactNode } from "react";
import { parseMarkdown, type Block, type Inline } from "./markdown";

/** Markdown an agent or the lead wrote, drawn as elements (never as HTML). */
export function Markdown({ text, testid }: { text: string; testid?: string }) {
  return (
    <div className="markdown" data-testid={testid}>
      {parseMarkdown(text).map((block, i) => (
        <Fragment key={i}>{drawBlock(block)}</Fragment>
      ))}
    </div>
  );
}

function drawBlock(block: Block): ReactNode {
  switch (block.kind) {
    case "heading": {
      // The page's own headings come first: a document's start at the fourth level.
      const Tag = `h${Math.min(block.level + 3, 6)}` as "h4" | "h5" | "h6";
      return <Tag>{drawInline(block.text)}</Tag>;
    }
    case "paragraph":
      return <p>{drawInline(block.text)}</p>;
    case "list": {
      const items = block.items.map((item, i) => <li key={i}>{drawInline(item)}</li>);
      return block.ordered ? <ol>{items}</ol> : <ul>{items}</ul>;
    }
    case "code":
      return <pre>{block.text}</pre>;
  }
}

function drawInline(spans: Inline[]): ReactNode {
  return spans.map((span, i) => {
    switch (span.kind) {
      case "code":
        return <code key={i}>{span.text}</code>;
      case "strong":
        return <strong key={i}>{span.text}</strong>;
      case "em":
        return <em key={i}>{span.text}</em>;
      default:
        return <Fragment key={i}>{span.text}</Fragment>;
    }
  });
}
