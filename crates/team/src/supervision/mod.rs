//! Supervision: the engine that keeps agents working. The `supervisor` runs a team's workers
//! (its lock, its resizes), says who it is (`info`) and answers the `requests` left for it;
//! each `worker` takes tasks one at a time and runs an `attempt` per agent process until the
//! task is done, failed or handed back; the `crew` is what the workers share; `host` the
//! machine's name in the team; `store_outage` lets a worker's changes ride out a store that
//! went away for a while.

pub(crate) mod attempt;
pub(crate) mod crew;
pub(crate) mod host;
pub(crate) mod info;
pub(crate) mod requests;
pub(crate) mod store_outage;
pub(crate) mod supervisor;
pub(crate) mod worker;
