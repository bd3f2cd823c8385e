import { useEffect, useState } from "react";
import { onChanges, type ChangeEvent } from "./api";

/** A number that grows with every batch of change-feed events holding one of `kinds` (any
 *  batch when none are named): a dependency for effects that re-read only what those changes
 *  touch, once per command, instead of on every log line. */
export function useChangeCount(...kinds: ChangeEvent["event"][]): number {
  const [count, setCount] = useState(0);
  const key = kinds.join(",");
  useEffect(() => {
    const wanted = new Set<string>(key.split(","));
    const unlisten = onChanges((batch) => {
      if (key === "" || batch.some((change) => wanted.has(change.event))) setCount((n) => n + 1);
    });
    return () => void unlisten.then((stop) => stop());
  }, [key]);
  return count;
}

/**
 * `read` run at once on `start()`, never two at a time: a start while one runs asks for one
 * more run after it (however many starts came meanwhile), so what is drawn is never older
 * than the last change and a burst of changes costs at most two reads.
 */
export function serialReads(read: () => Promise<unknown>): { start: () => void } {
  let running = false;
  let again = false;
  const start = () => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    void read()
      .catch(() => undefined)
      .finally(() => {
        running = false;
        if (again) {
          again = false;
          start();
        }
      });
  };
  return { start };
}
