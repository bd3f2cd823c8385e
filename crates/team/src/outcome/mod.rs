//! A team's outcome: the board at a glance (`board_summary`, the status line a team prints) and
//! the `verdict` it ends with (what landed, what failed and why, the exit code).

pub(crate) mod board_summary;
pub(crate) mod ended;
pub(crate) mod verdict;
