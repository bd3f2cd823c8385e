import { Button } from "@radix-ui/themes";
import { memo, useState } from "react";
import type { Entry } from "./team";
import { usd } from "./team";

/** Entries drawn at first, the latest ones; "Show earlier" adds as many again. A transcript of
 *  10,000 events opens and follows as fast as one of 500 (bench/desktop_views.rs). */
export const PAGE = 500;

/** A transcript rendered for reading: the agent's text, each tool call folded with its input
 *  and result, errors marked, the final result with its cost. The latest [`PAGE`] entries are
 *  drawn, earlier ones on request. */
export function Transcript({ entries }: { entries: Entry[] }) {
  const [limit, setLimit] = useState(PAGE);
  const hidden = Math.max(0, entries.length - limit);
  return (
    <>
      {hidden > 0 && (
        <Button variant="soft" className="show-earlier" onClick={() => setLimit((n) => n + PAGE)} data-testid="show-earlier">
          Show {Math.min(PAGE, hidden)} earlier of {hidden}
        </Button>
      )}
      <ol className="transcript" data-testid="transcript" aria-label="Transcript">
        {entries.slice(hidden).map((e) => (
          <TranscriptEntry key={e.seq} entry={e} />
        ))}
      </ol>
    </>
  );
}

/** One entry; drawn again only when it changes (a tool call when its result comes). */
const TranscriptEntry = memo(function TranscriptEntry({ entry: e }: { entry: Entry }) {
  return (
    <li className={`entry ${e.kind}${"isError" in e && e.isError ? " failed" : ""}`} data-testid={`entry-${e.kind}`}>
      {e.kind === "text" && <p>{e.text}</p>}
      {e.kind === "tool" && (
        <details>
          <summary>
            <span className="tool-name">{e.name}</span>
            {e.output === null ? " (running)" : e.isError ? " (error)" : ""}
          </summary>
          <pre className="tool-input">{e.input}</pre>
          {e.output !== null && <pre className="tool-output">{e.output}</pre>}
        </details>
      )}
      {e.kind === "error" && (
        <p>
          <strong>Error:</strong> {e.text}
        </p>
      )}
      {e.kind === "result" && (
        <p>
          <strong>{e.isError ? "Failed" : "Result"}:</strong> {e.text}
          {e.cost !== null && <span className="cost"> ({usd(e.cost)})</span>}
        </p>
      )}
      {e.kind === "note" && <p className="note">{e.text}</p>}
      {e.kind === "launch" && (
        <details className="launch">
          <summary>Attempt started in {e.workdir}</summary>
          <pre>{e.command}</pre>
        </details>
      )}
    </li>
  );
});
