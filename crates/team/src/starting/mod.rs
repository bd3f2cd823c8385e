//! Starting a team: the `request` a `team up` makes (checked before anything runs) and `start`,
//! which resizes a running team or starts a supervisor for it.

pub(crate) mod request;
pub(crate) mod start;
