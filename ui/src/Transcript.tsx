import type { Entry } from "./team";
import { usd } from "./team";

/** A transcript rendered for reading: the agent's text, each tool call folded with its input
 *  and result, errors marked, the final result with its cost. */
export function Transcript({ entries }: { entries: Entry[] }) {
  return (
    <ol className="transcript" data-testid="transcript" aria-label="Transcript">
      {entries.map((e) => (
        <li key={e.seq} className={`entry ${e.kind}${"isError" in e && e.isError ? " failed" : ""}`} data-testid={`entry-${e.kind}`}>
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
        </li>
      ))}
    </ol>
  );
}
