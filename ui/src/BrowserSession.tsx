import { Button, TextField } from "@radix-ui/themes";
import { useCallback, useEffect, useState } from "react";
import { api, errorMessage, onStartSession, type BrowserRecord } from "./api";
import { useChangeCount } from "./changes";
import type { ListedBrowser, PageState, Screenshot } from "./types";

/** Manual UI-test session: a visible browser on a registered CDP port; finishing it (or
 * closing the browser window) writes the run's `ui-test-done` signal. The controls (open a
 * URL, reload, screenshot) work on any open browser in the registry, the session's by default. */
export function BrowserSession({ onError }: { onError: (m: string) => void }) {
  const [url, setUrl] = useState("http://127.0.0.1:3000/");
  const [browser, setBrowser] = useState<BrowserRecord | null>(null);
  const [open, setOpen] = useState<ListedBrowser[]>([]);
  // Bumped on every re-read, so the controls re-read the page too: a session's browser is
  // registered (and shown) before its first page has finished loading.
  const [generation, setGeneration] = useState(0);

  const reload = useCallback(() => {
    setGeneration((n) => n + 1);
    api.browserSession().then(setBrowser, (e: unknown) => onError(errorMessage(e)));
    api.browserList().then(
      (list) => setOpen(list.filter((b) => b.alive)),
      (e: unknown) => onError(errorMessage(e)),
    );
  }, [onError]);

  // Re-read when the registry changes: a closed browser window ends the session from the
  // backend, and agents' proxies add and remove browsers.
  const browsersChanged = useChangeCount("browser_added", "browser_removed");
  useEffect(reload, [browsersChanged, reload]);

  const start = useCallback(() => {
    api.browserSessionStart(url).then(reload, (e: unknown) => onError(errorMessage(e)));
  }, [url, reload, onError]);

  // The tray's "Start manual session" starts it here, with the URL in the field.
  useEffect(() => {
    const unlisten = onStartSession(start);
    return () => void unlisten.then((stop) => stop());
  }, [start]);

  return (
    <section className="browser-session" data-testid="browser-session">
      <div className="session-bar">
        <strong>Manual test session</strong>
        {browser ? (
          <>
            <span data-testid="browser-status">
              browser on CDP port {browser.port} (pid {browser.pid})
            </span>
            <Button
              variant="soft"
              data-testid="finish-session"
              onClick={() => api.browserSessionFinish().then(reload, (e: unknown) => onError(errorMessage(e)))}
            >
              Finish session
            </Button>
          </>
        ) : (
          <>
            <TextField.Root aria-label="URL to test" value={url} onChange={(e) => setUrl(e.target.value)} data-testid="session-url" />
            <Button variant="solid" data-testid="start-session" onClick={start}>
              Start session
            </Button>
          </>
        )}
        <span className="browsers" data-testid="browsers">
          {open.length} open browser(s)
          {open.map((b) => (
            <span key={b.port} className="browser" title={b.cdp_endpoint}>
              {" "}
              · {b.owner} on :{b.port}
              {b.headless ? " (headless)" : ""}
            </span>
          ))}
        </span>
      </div>
      {open.length > 0 && <BrowserControls browsers={open} preferred={browser?.port ?? null} generation={generation} onError={onError} />}
    </section>
  );
}

/** Open a URL, reload, screenshot (saved in .coordination/screenshots/ and shown here). */
function BrowserControls({
  browsers,
  preferred,
  generation,
  onError,
}: {
  browsers: ListedBrowser[];
  preferred: number | null;
  generation: number;
  onError: (m: string) => void;
}) {
  const [chosen, setChosen] = useState<number | null>(null);
  const port = browsers.some((b) => b.port === chosen) ? chosen : (preferred ?? browsers[0]?.port ?? null);
  const [target, setTarget] = useState("");
  const [page, setPage] = useState<PageState | null>(null);
  const [shot, setShot] = useState<Screenshot | null>(null);
  const [busy, setBusy] = useState<string | null>(null);

  // The page's title and URL when a browser is chosen; the controls update them after each use.
  useEffect(() => {
    if (port === null) return;
    api.browserShow(port).then(setPage, () => setPage(null));
  }, [port, generation]);

  if (port === null) return null;
  const act = <T,>(what: string, call: Promise<T>, then: (value: T) => void) => {
    setBusy(what);
    call.then(then, (e: unknown) => onError(errorMessage(e))).finally(() => setBusy(null));
  };

  return (
    <div className="browser-controls" data-testid="browser-controls">
      <select aria-label="Browser to control" value={port} onChange={(e) => setChosen(Number(e.target.value))} data-testid="control-port">
        {browsers.map((b) => (
          <option key={b.port} value={b.port}>
            :{b.port} {b.owner}
          </option>
        ))}
      </select>
      <TextField.Root
        aria-label="URL to open"
        placeholder="URL to open"
        value={target}
        onChange={(e) => setTarget(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter") act("Opening…", api.browserNavigate(port, target), setPage);
        }}
        data-testid="navigate-url"
      />
      <Button variant="soft" data-testid="navigate" disabled={busy !== null} onClick={() => act("Opening…", api.browserNavigate(port, target), setPage)}>
        Open
      </Button>
      <Button variant="soft" data-testid="reload-page" disabled={busy !== null} onClick={() => act("Reloading…", api.browserReload(port), setPage)}>
        Reload
      </Button>
      <Button variant="soft" data-testid="screenshot" disabled={busy !== null} onClick={() => act("Taking a screenshot…", api.browserScreenshot(port), setShot)}>
        Screenshot
      </Button>
      <span className="page-state" data-testid="page-state" role="status">
        {busy ?? (page ? `${page.title || "(untitled)"} — ${page.url}` : "")}
      </span>
      {shot && (
        <figure className="screenshot" data-testid="screenshot-shown">
          <img src={shot.data_url} alt={`Screenshot saved as ${shot.path}`} />
          <figcaption data-testid="screenshot-path">
            Saved {shot.path} ({Math.round(shot.bytes / 1024)} KiB) <Button variant="soft" onClick={() => setShot(null)}>hide</Button>
          </figcaption>
        </figure>
      )}
    </div>
  );
}
