//! An agent that goes on running after it reported its task: its worker is not held by it.

use std::time::{Duration, Instant};

/// An agent that goes on running after it reported its task: looked for once a second, and
/// stopped once its grace is over (the attempt's end is then its report).
pub(super) struct Lingering {
    grace: Duration,
    next: Instant,
    reported: Option<Instant>,
    stopped: bool,
}

impl Lingering {
    const EVERY: Duration = Duration::from_secs(1);

    pub(super) fn new(grace: Duration) -> Lingering {
        Lingering {
            grace,
            next: Instant::now() + Lingering::EVERY,
            reported: None,
            stopped: false,
        }
    }

    /// How long until the next look.
    pub(super) fn next_look(&self) -> Duration {
        match self.stopped {
            true => Duration::MAX,
            false => self.next.saturating_duration_since(Instant::now()),
        }
    }

    /// When a look is due, asks `reported` (the task is no longer this attempt's to work);
    /// what to say when the agent must be stopped now.
    pub(super) fn look(&mut self, reported: impl FnOnce() -> bool) -> Option<String> {
        let now = Instant::now();
        if self.stopped || now < self.next {
            return None;
        }
        self.next = now + Lingering::EVERY;
        if self.reported.is_none() && reported() {
            self.reported = Some(now);
        }
        let since = self.reported?.elapsed();
        if since < self.grace {
            return None;
        }
        self.stopped = true;
        Some(format!(
            "stopping the agent: it reported its task {}s ago and still runs \
             (grace_after_report_secs = {})",
            since.as_secs(),
            self.grace.as_secs_f64()
        ))
    }
}
