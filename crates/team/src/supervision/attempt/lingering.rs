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
        self.look_at(Instant::now(), reported)
    }

    /// [`look`](Self::look) at `now`.
    fn look_at(&mut self, now: Instant, reported: impl FnOnce() -> bool) -> Option<String> {
        if self.stopped || now < self.next {
            return None;
        }
        self.next = now + Lingering::EVERY;
        if self.reported.is_none() && reported() {
            self.reported = Some(now);
        }
        let since = now.saturating_duration_since(self.reported?);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_is_stopped_once_its_grace_after_its_report_is_over_and_only_once() {
        let mut lingering = Lingering::new(Duration::from_secs(60));
        let start = Instant::now();
        // Not due yet: the task is not even read.
        assert_eq!(lingering.look_at(start, || panic!("read too early")), None);
        let second = |s: u64| start + Duration::from_secs(s);
        assert_eq!(lingering.look_at(second(2), || false), None, "not reported");
        assert_eq!(
            lingering.look_at(second(3), || true),
            None,
            "reported just now"
        );
        assert_eq!(
            lingering.look_at(second(40), || unreachable!()),
            None,
            "within its grace"
        );
        let said = lingering.look_at(second(64), || unreachable!()).unwrap();
        assert!(said.contains("reported its task 61s ago"), "{said}");
        assert!(said.contains("grace_after_report_secs = 60"), "{said}");
        assert_eq!(lingering.next_look(), Duration::MAX);
        assert_eq!(
            lingering.look_at(second(120), || true),
            None,
            "stopped once"
        );
    }
}
