import { useSyncExternalStore } from "react";

/** Whether a CSS media query matches, kept current as the window changes (a phone turned, a
 *  desktop window narrowed). */
export function useMedia(query: string): boolean {
  return useSyncExternalStore(
    (changed) => {
      if (typeof window.matchMedia !== "function") return () => {};
      const list = window.matchMedia(query);
      list.addEventListener("change", changed);
      return () => list.removeEventListener("change", changed);
    },
    () => typeof window.matchMedia === "function" && window.matchMedia(query).matches,
  );
}

/** The width at and below which the UI takes its phone layout (as `style.css` does). */
export const NARROW = "(max-width: 700px)";

/** The system asks for dark colours (the desktop's theme, or the phone's). */
export const DARK = "(prefers-color-scheme: dark)";
