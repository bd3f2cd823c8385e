//! Claude Code on Baton, as library code: the project's `.mcp.json` and `.claude/settings.json`
//! merged and recorded so they can be put back (`settings`, `setup`), and what the hooks Baton
//! installs tell a worker (`answers`, the words; `hooks`, what each hook answers from the
//! stores), and the folder trust Claude Code needs before it runs a project's MCP servers and
//! hooks (`trust`). How a supervised Claude Code is started is `launch`'s.
//! The `baton` CLI only reads and prints (`baton setup claude`, `baton claude-hook`).

pub mod answers;
pub mod hooks;
pub mod settings;
pub mod setup;
pub mod trust;
