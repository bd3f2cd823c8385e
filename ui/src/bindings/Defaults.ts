// Generated from baton-api (see src-tauri/src/bindings.rs). Do not edit.

/** The priority a new task gets unless told otherwise (1 is the most urgent). */
export const DEFAULT_PRIORITY = 5;
/** The highest priority number accepted. */
export const MAX_PRIORITY = 1000;
/** The lead's one name (a question's recipient, a message's sender, the reviewer). */
export const LEAD = "lead";
/** The built-in agent profiles, one per agent CLI Baton runs, in its adapters' order. */
export const AGENT_PROFILES = ["claude", "codex", "gemini", "opencode", "exec"] as const;
