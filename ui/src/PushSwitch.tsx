import { Button } from "@radix-ui/themes";
import { useEffect, useState } from "react";
import { api, errorMessage, served } from "./api";
import { pushSupport, startPushes, stopPushes } from "./notify";

/** Turns pushes to this device on and off (a served page only): what waits for the lead, and a
 *  team's end, reach the phone while no page is open. Says why when this browser cannot. */
export function PushSwitch({ onError }: { onError: (message: string | null) => void }) {
  const [support] = useState(pushSupport);
  const [on, setOn] = useState<boolean | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (!support.ok) return;
    let current = true;
    api.pushKey().then(
      (k) => current && setOn(k.subscribed),
      (e: unknown) => current && onError(errorMessage(e)),
    );
    return () => {
      current = false;
    };
  }, [support, onError]);
  if (!served) return null;
  if (!support.ok) {
    return (
      <p className="muted" data-testid="push-unsupported">
        Pushes while this page is closed: {support.why}.
      </p>
    );
  }
  if (on === null) return null;
  const toggle = () => {
    setBusy(true);
    (on ? stopPushes() : startPushes()).then(
      () => {
        setOn(!on);
        onError(null);
      },
      (e: unknown) => onError(errorMessage(e)),
    ).finally(() => setBusy(false));
  };
  return (
    <p className="notify-offer">
      <Button variant="soft" disabled={busy} onClick={toggle} data-testid="push-switch">
        {on ? "Stop pushing to this device" : "Push to this device"}
      </Button>{" "}
      <span className="muted">{on ? "questions, approvals and the team's end reach it while the page is closed" : "while the page is closed"}</span>
    </p>
  );
}
