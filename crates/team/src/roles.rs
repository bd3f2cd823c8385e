//! The seats of a team beside its workers, as its request settles them (the planner's is
//! `crate::planning::Planning`): a plain record each, which the crew holds and the module that
//! runs the seat reads.

use crate::profile::Profile;

/// A team's judge ([`crate::landing::judge`]).
#[derive(Debug, Clone)]
pub struct Judge {
    /// Its agent name, on the record of what it said.
    pub name: String,
    /// What judges.
    pub by: JudgeBy,
}

/// What a judge is.
#[derive(Debug, Clone)]
pub enum JudgeBy {
    /// A command (an `exec` profile's), given the task and its diff: exit 0 approves.
    Command(String),
    /// An agent (Claude Code, Codex, …) run with this profile in a sandbox that shows the work
    /// read-only: its last words end with its verdict.
    Agent(Box<Profile>),
}
