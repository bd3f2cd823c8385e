//! The seats of a team beside its workers, as its request settles them (the planner's is
//! `crate::planning::Planning`): a plain record each, which the crew holds and the module that
//! runs the seat reads.

/// A team's judge ([`crate::landing::judge`]).
#[derive(Debug, Clone)]
pub struct Judge {
    /// Its agent name, on the record of what it said.
    pub name: String,
    /// The command that judges.
    pub command: String,
}
