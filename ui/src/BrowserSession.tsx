import { useCallback, useEffect, useState } from "react";
import { api, errorMessage, type BrowserRecord } from "./api";

/** Manual UI-test session: a visible browser on a registered CDP port; finishing it (or
 * closing the browser window) writes the run's `ui-test-done` signal. */
export function BrowserSession({ version, onError }: { version: number; onError: (m: string) => void }) {
  const [url, setUrl] = useState("http://127.0.0.1:3000/");
  const [browser, setBrowser] = useState<BrowserRecord | null>(null);
  const [open, setOpen] = useState<(BrowserRecord & { alive: boolean })[]>([]);

  const reload = useCallback(() => {
    api.browserSession().then(setBrowser, (e: unknown) => onError(errorMessage(e)));
    api.listBrowsers().then(setOpen, (e: unknown) => onError(errorMessage(e)));
  }, [onError]);

  // Re-read on every change: a closed browser window ends the session from the backend, and
  // agents' proxies add and remove browsers in the registry.
  useEffect(reload, [version, reload]);

  return (
    <section className="browser-session" data-testid="browser-session">
      <strong>Manual test session</strong>
      {browser ? (
        <>
          <span data-testid="browser-status">
            browser on CDP port {browser.port} (pid {browser.pid})
          </span>
          <button
            data-testid="finish-session"
            onClick={() => api.browserSessionFinish().then(reload, (e: unknown) => onError(errorMessage(e)))}
          >
            Finish session
          </button>
        </>
      ) : (
        <>
          <input aria-label="URL to test" value={url} onChange={(e) => setUrl(e.target.value)} data-testid="session-url" />
          <button
            data-testid="start-session"
            onClick={() => api.browserSessionStart(url).then(reload, (e: unknown) => onError(errorMessage(e)))}
          >
            Start session
          </button>
        </>
      )}
      <span className="browsers" data-testid="browsers">
        {open.filter((b) => b.alive).length} open browser(s)
        {open
          .filter((b) => b.alive)
          .map((b) => (
            <span key={b.port} className="browser" title={b.cdp_endpoint}>
              {" "}
              · {b.owner} on :{b.port}
              {b.headless ? " (headless)" : ""}
            </span>
          ))}
      </span>
    </section>
  );
}
