//! Timestamps as `tasks.json` stores them.
//!
//! Baton writes RFC 3339 in UTC with microseconds (`2026-01-19T20:54:25.282933Z`). The source
//! design's tool wrote Python's naive `datetime.now().isoformat()`, local time without an
//! offset; those are read as local time so files it wrote keep their meaning.

use std::fmt;

use chrono::{DateTime, Local, NaiveDateTime, SecondsFormat, SubsecRound, TimeZone, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An instant, ordered and comparable, serialised as RFC 3339 UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub DateTime<Utc>);

impl Timestamp {
    /// The current instant, to the microsecond: what is in memory equals what is written.
    pub fn now() -> Self {
        Timestamp(Utc::now().trunc_subsecs(6))
    }

    /// Parses RFC 3339 (any offset) or a naive ISO 8601 date-time taken as local time.
    pub fn parse(text: &str) -> Option<Self> {
        if let Some(t) = parse_own_format(text) {
            return Some(t);
        }
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

    /// This instant moved back by `duration`, saturating at the far past.
    pub fn before(self, duration: std::time::Duration) -> Self {
        let delta = chrono::Duration::from_std(duration).unwrap_or(chrono::Duration::MAX);
        Timestamp(
            self.0
                .checked_sub_signed(delta)
                .unwrap_or(DateTime::<Utc>::MIN_UTC),
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
        match format_own(self) {
            Some(buf) => f.write_str(std::str::from_utf8(&buf).expect("ASCII digits")),
            None => f.write_str(&self.0.to_rfc3339_opts(SecondsFormat::Micros, true)),
        }
    }
}

/// Baton's own format, `YYYY-MM-DDTHH:MM:SS.ffffffZ`, is most of what a large tasks.json
/// holds; reading and writing it by hand instead of through chrono's general parser and
/// formatter saves about a fifth of the time a claim spends on a 10,000-task file.
const OWN_LEN: usize = 27;

fn parse_own_format(text: &str) -> Option<Timestamp> {
    let b = text.as_bytes();
    if b.len() != OWN_LEN
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b'T'
        || b[13] != b':'
        || b[16] != b':'
        || b[19] != b'.'
        || b[26] != b'Z'
    {
        return None;
    }
    let num = |range: std::ops::Range<usize>| -> Option<u32> {
        b[range].iter().try_fold(0u32, |acc, &c| {
            c.is_ascii_digit().then(|| acc * 10 + u32::from(c - b'0'))
        })
    };
    let date = chrono::NaiveDate::from_ymd_opt(num(0..4)? as i32, num(5..7)?, num(8..10)?)?;
    let time = date.and_hms_micro_opt(num(11..13)?, num(14..16)?, num(17..19)?, num(20..26)?)?;
    Some(Timestamp(Utc.from_utc_datetime(&time)))
}

fn format_own(t: &Timestamp) -> Option<[u8; OWN_LEN]> {
    use chrono::{Datelike, Timelike};
    let d = t.0;
    let micros = d.nanosecond() / 1000;
    if !(0..=9999).contains(&d.year()) || micros >= 1_000_000 {
        return None; // leap seconds and far-off years take the general path
    }
    let mut buf = *b"0000-00-00T00:00:00.000000Z";
    let mut put = |at: usize, width: usize, mut value: u32| {
        for i in (at..at + width).rev() {
            buf[i] = b'0' + (value % 10) as u8;
            value /= 10;
        }
    };
    put(0, 4, d.year() as u32);
    put(5, 2, d.month());
    put(8, 2, d.day());
    put(11, 2, d.hour());
    put(14, 2, d.minute());
    put(17, 2, d.second());
    put(20, 6, micros);
    Some(buf)
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl schemars::JsonSchema for Timestamp {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Timestamp".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "format": "date-time",
            "description": "RFC 3339, UTC (e.g. 2026-01-19T20:54:25.123456Z)"
        })
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        /// Parses the text where it lies: a board holds thousands of times, and reading each
        /// into a string of its own first (as a `Cow<str>` is read) was an allocation apiece.
        struct Text;
        impl serde::de::Visitor<'_> for Text {
            type Value = Timestamp;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a date-time (e.g. 2026-01-19T20:54:25Z)")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Timestamp, E> {
                Timestamp::parse(text).ok_or_else(|| {
                    E::custom(format!(
                        "{text:?} is not a date-time (expected e.g. 2026-01-19T20:54:25Z)"
                    ))
                })
            }
        }
        deserializer.deserialize_str(Text)
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
    fn the_fast_path_agrees_with_chrono() {
        for text in [
            "2026-01-19T20:54:25.282933Z",
            "0001-01-01T00:00:00.000000Z",
            "9999-12-31T23:59:59.999999Z",
            "2024-02-29T12:00:00.000001Z",
        ] {
            let fast = parse_own_format(text).unwrap();
            let general = DateTime::parse_from_rfc3339(text)
                .unwrap()
                .with_timezone(&Utc);
            assert_eq!(fast.0, general, "{text}");
            assert_eq!(
                fast.to_string(),
                general.to_rfc3339_opts(SecondsFormat::Micros, true)
            );
        }
        for bad in [
            "2026-02-30T00:00:00.000000Z",
            "2026-01-19T25:00:00.000000Z",
            "2026-01-19T20:54:25.28293xZ",
            "2026-01-19 20:54:25.282933Z",
        ] {
            assert!(parse_own_format(bad).is_none(), "{bad}");
        }
        assert!(Timestamp::parse("2026-02-30T00:00:00.000000Z").is_none());
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
        let err = serde_json::from_str::<Timestamp>("1769000000").unwrap_err();
        assert!(err.to_string().contains("expected a date-time"), "{err}");
    }

    #[test]
    fn reads_a_time_however_its_text_reaches_it() {
        let expected = Timestamp::parse("2026-01-19T20:54:25Z").unwrap();
        // In place, escaped (read into scratch space), and from a JSON tree.
        for read in [
            serde_json::from_str::<Timestamp>("\"2026-01-19T20:54:25Z\"").unwrap(),
            serde_json::from_str::<Timestamp>("\"2026-01-19T20\\u003a54:25Z\"").unwrap(),
            serde_json::from_value::<Timestamp>(serde_json::json!("2026-01-19T20:54:25Z")).unwrap(),
        ] {
            assert_eq!(read, expected);
        }
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
