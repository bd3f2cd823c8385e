// Text from agents (questions, messages, summaries, transcripts) and file names is shown as
// written, never obeyed: a bidirectional override or isolate (U+202A–U+202E, U+2066–U+2069)
// would make the lead read a line in another order than it is, and a C0 or C1 control is
// invisible. Each is written out as `\u{202e}`, as the CLI does (baton_core::text::inert).
// Applied once, where the backend's answers and the change feed reach the page (api.ts).

// Newlines, tabs and carriage returns stay: the page lays them out itself.
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/;
const CONTROLS = new RegExp(CONTROL.source, "g");

/** `text` with its controls and bidirectional overrides written out. */
export function inertText(text: string): string {
  if (!CONTROL.test(text)) return text;
  return text.replace(CONTROLS, (c) => `\\u{${c.charCodeAt(0).toString(16).padStart(4, "0")}}`);
}

/** `value` with every string in it made inert ([`inertText`]), in place where it can be: the
 *  backend's answers are fresh objects the page owns. */
export function inertDeep<T>(value: T): T {
  if (typeof value === "string") return inertText(value) as T;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = inertDeep(value[i]);
    return value;
  }
  if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) record[key] = inertDeep(record[key]);
  }
  return value;
}
