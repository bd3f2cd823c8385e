//! Timestamps as `tasks.json` stores them.
//!
//! Baton writes RFC 3339 in UTC with microseconds (`2026-01-19T20:54:25.282933Z`). The source
//! design's tool wrote Python's naive `datetime.now().isoformat()`, local time without an
//! offset; those are read as local time so files it wrote keep their meaning.

use std::fmt;

use chrono::{DateTime, Local, NaiveDateTime, SecondsFormat, TimeZone, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An instant, ordered and comparable, serialised as RFC 3339 UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub DateTime<Utc>);

impl Timestamp {
    pub fn now() -> Self {
        Timestamp(Utc::now())
    }

    /// Parses RFC 3339 (any offset) or a naive ISO 8601 date-time taken as local time.
    pub fn parse(text: &str) -> Option<Self> {
        if let Ok(t) = DateTime::parse_from_rfc3339(text) {
            return Some(Timestamp(t.with_timezone(&Utc)));
        }
        for format in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f"] {
            if let Ok(naive) = NaiveDateTime::parse_from_str(text, format) {
                let local = Local
                    .from_local_datetime(&naive)
                    .earliest()
                    .unwrap_or_else(|| Utc.from_utc_datetime(&naive).with_timezone(&Local));
                return Some(Timestamp(local.with_timezone(&Utc)));
            }
        }
        None
    }

    /// This instant moved forward by `duration`, saturating at the far future.
    pub fn after(self, duration: std::time::Duration) -> Self {
        let delta = chrono::Duration::from_std(duration).unwrap_or(chrono::Duration::MAX);
        Timestamp(
            self.0
                .checked_add_signed(delta)
                .unwrap_or(DateTime::<Utc>::MAX_UTC),
        )
    }

    /// How long ago this instant was, seen from `now` (zero if it lies ahead).
    pub fn age(self, now: Timestamp) -> std::time::Duration {
        (now.0 - self.0).to_std().unwrap_or_default()
    }

    /// How long from `now` until this instant (zero if it has passed).
    pub fn remaining(self, now: Timestamp) -> std::time::Duration {
        (self.0 - now.0).to_std().unwrap_or_default()
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.to_rfc3339_opts(SecondsFormat::Micros, true))
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        Timestamp::parse(&text).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "{text:?} is not a date-time (expected e.g. 2026-01-19T20:54:25Z)"
            ))
        })
    }
}

/// Formats a duration for people: `42s`, `5m 3s`, `2h 10m`, `3d 4h`.
pub fn short_duration(duration: std::time::Duration) -> String {
    let secs = duration.as_secs();
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m {}s", secs / 60, secs % 60),
        3600..86400 => format!("{}h {}m", secs / 3600, secs % 3600 / 60),
        _ => format!("{}d {}h", secs / 86400, secs % 86400 / 3600),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_rfc3339() {
        let t = Timestamp::parse("2026-01-19T20:54:25.282933Z").unwrap();
        assert_eq!(t.to_string(), "2026-01-19T20:54:25.282933Z");
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(serde_json::from_str::<Timestamp>(&json).unwrap(), t);
    }

    #[test]
    fn reads_offsets_and_naive_local_times() {
        let offset = Timestamp::parse("2026-01-19T21:54:25+01:00").unwrap();
        assert_eq!(offset.to_string(), "2026-01-19T20:54:25.000000Z");
        let naive = Timestamp::parse("2026-01-19T20:54:25.282933").unwrap();
        let expected = Local
            .from_local_datetime(
                &NaiveDateTime::parse_from_str(
                    "2026-01-19T20:54:25.282933",
                    "%Y-%m-%dT%H:%M:%S%.f",
                )
                .unwrap(),
            )
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(naive.0, expected);
    }

    #[test]
    fn refuses_garbage_with_a_clear_message() {
        let err = serde_json::from_str::<Timestamp>("\"yesterday\"").unwrap_err();
        assert!(err.to_string().contains("\"yesterday\" is not a date-time"));
    }

    #[test]
    fn formats_short_durations() {
        use std::time::Duration;
        assert_eq!(short_duration(Duration::from_secs(42)), "42s");
        assert_eq!(short_duration(Duration::from_secs(303)), "5m 3s");
        assert_eq!(short_duration(Duration::from_secs(7800)), "2h 10m");
        assert_eq!(
            short_duration(Duration::from_secs(3 * 86400 + 4 * 3600)),
            "3d 4h"
        );
    }
}
