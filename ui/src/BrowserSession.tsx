import { useEffect, useState } from "react";
import { api, errorMessage, type BrowserRecord } from "./api";

/** Manual UI-test session: a visible browser on a registered CDP port; finishing it (or
 * closing the browser window) writes the run's `ui-test-done` signal. */
export function BrowserSession({ version, onError }: { version: number; onError: (m: string) => void }) {
  const [url, setUrl] = useState("http://127.0.0.1:3000/");
  const [browser, setBrowser] = useState<BrowserRecord | null>(null);

  // Re-read on every change: a closed browser window ends the session from the backend.
  useEffect(() => {
    api.browserSession().then(setBrowser, (e: unknown) => onError(errorMessage(e)));
  }, [version, onError]);

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
            onClick={() => api.browserSessionFinish().then(() => setBrowser(null), (e: unknown) => onError(errorMessage(e)))}
          >
            Finish session
          </button>
        </>
      ) : (
        <>
          <input aria-label="URL to test" value={url} onChange={(e) => setUrl(e.target.value)} data-testid="session-url" />
          <button
            data-testid="start-session"
            onClick={() => api.browserSessionStart(url).then(setBrowser, (e: unknown) => onError(errorMessage(e)))}
          >
            Start session
          </button>
        </>
      )}
    </section>
  );
}
