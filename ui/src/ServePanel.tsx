import { Button, TextField } from "@radix-ui/themes";
import { useEffect, useState } from "react";
import { api, errorMessage } from "./api";
import type { Pairing } from "./bindings/Pairing";
import type { ServeState } from "./bindings/ServeState";

/** Away from the desk: the desktop starts `baton serve` for the open project, shows where it
 *  listens, makes a one-time pairing link (with its QR code) for a phone, and stops it. */
export function ServePanel({ onError }: { onError: (message: string) => void }) {
  const [state, setState] = useState<ServeState | null>(null);
  const [listen, setListen] = useState("127.0.0.1:8787");
  const [pairing, setPairing] = useState<Pairing | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    api.serveStatus().then(setState, (e: unknown) => onError(errorMessage(e)));
  }, [onError]);
  const act = (work: Promise<ServeState>) => {
    setBusy(true);
    work.then(
      (s) => {
        setState(s);
        if (!s.url) setPairing(null);
      },
      (e: unknown) => onError(errorMessage(e)),
    ).finally(() => setBusy(false));
  };
  const pair = (scope: string) => api.servePair(scope).then(setPairing, (e: unknown) => onError(errorMessage(e)));
  const loopback = /^(127\.|\[::1\]|localhost)/.test(listen.trim());
  return (
    <section className="serve-panel" aria-labelledby="serve-title" data-testid="serve-panel">
      <h2 id="serve-title">Away from the desk</h2>
      {state?.url ? (
        <>
          <p>
            Served at <code data-testid="serve-url">{state.url}</code>
            {!state.ours && <span className="muted"> (by `baton serve` in a terminal)</span>}
          </p>
          <div className="serve-actions">
            <Button variant="soft" onClick={() => void pair("lead")} data-testid="serve-pair-lead">
              Pair a phone as lead
            </Button>
            <Button variant="soft" onClick={() => void pair("responder")} data-testid="serve-pair-responder">
              Pair a phone as responder
            </Button>
            {state.ours && (
              <Button variant="soft" disabled={busy} onClick={() => act(api.serveStop())} data-testid="serve-stop">
                Stop serving
              </Button>
            )}
          </div>
          {pairing && (
            <figure className="pairing" data-testid="serve-pairing">
              <img src={`data:image/svg+xml;utf8,${encodeURIComponent(pairing.qr_svg)}`} alt="QR code of the pairing link" width={200} height={200} />
              <figcaption>
                Open once on the phone, within 10 minutes, to pair it as {pairing.scope}: <code data-testid="serve-link">{pairing.link}</code>
              </figcaption>
            </figure>
          )}
        </>
      ) : (
        <div className="serve-actions">
          <label>
            Listen on <TextField.Root value={listen} onChange={(e) => setListen(e.target.value)} data-testid="serve-listen" />
          </label>
          <Button variant="solid" disabled={busy} onClick={() => act(api.serveStart(listen))} data-testid="serve-start">
            Serve to paired browsers
          </Button>
          {!loopback && (
            <p className="warning" role="note">
              Beyond this machine the traffic is plain HTTP: start `baton serve` with a certificate, or use a tunnel (the guide's "Away from the desk").
            </p>
          )}
        </div>
      )}
    </section>
  );
}
