import { useEffect, useState } from "react";
import { onChange, type ChangeEvent } from "./api";

/** A number that grows with every change-feed event of one of `kinds`: a dependency for
 *  effects that re-read only what those changes touch, instead of on every log line. */
export function useChangeCount(...kinds: ChangeEvent["event"][]): number {
  const [count, setCount] = useState(0);
  const key = kinds.join(",");
  useEffect(() => {
    const wanted = new Set<string>(key.split(","));
    const unlisten = onChange((change) => {
      if (wanted.has(change.event)) setCount((n) => n + 1);
    });
    return () => void unlisten.then((stop) => stop());
  }, [key]);
  return count;
}
