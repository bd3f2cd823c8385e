//! Landing: how done work reaches the lead's branch. The `merge_queue` holds done tasks in the
//! order they are to land; the `merger` lands one (rebase, the `judge`'s word when the team has
//! one, the `judge_agent` when it is an agent, the project's `check`, fast-forward) or sends it
//! back; `check` runs the project's check
//! command, sandboxed.

pub(crate) mod check;
pub(crate) mod judge;
pub(crate) mod judge_agent;
pub(crate) mod merge_queue;
pub(crate) mod merger;
