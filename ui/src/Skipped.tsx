import type { Unreadable } from "./bindings/Unreadable";

/** Records a view could not read, named with why: the view shows everything else. */
export function Skipped({ unreadable, of, prefix = "" }: { unreadable: Unreadable[]; of: string; prefix?: string }) {
  if (unreadable.length === 0) return null;
  return (
    <div className="notice" role="alert" data-testid="unreadable">
      <p>
        {unreadable.length === 1 ? "One record" : `${unreadable.length} records`} of {of} could not be read and{" "}
        {unreadable.length === 1 ? "is" : "are"} left out (see <code>baton leader doctor</code>):
      </p>
      <ul>
        {unreadable.map((u) => (
          <li key={u.document}>
            <code>
              {prefix}
              {u.document}
            </code>
            : {u.problem}
          </li>
        ))}
      </ul>
    </div>
  );
}
