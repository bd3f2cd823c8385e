//! Values written by people: durations such as `90s`, `15m` or `1h30m`. The command line parses
//! its duration flags with these, including those of requests that carry seconds.

use std::time::Duration;

/// A duration such as `90s`, `15m` or `1h30m`, longer than zero.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let duration = humantime::parse_duration(text)
        .map_err(|e| format!("{e}; write e.g. 90s, 15m or 1h30m"))?;
    if duration.is_zero() {
        return Err("must be longer than zero".into());
    }
    Ok(duration)
}

/// [`parse_duration`] in whole seconds, at least one.
pub fn parse_seconds(text: &str) -> Result<u64, String> {
    Ok(parse_duration(text)?.as_secs().max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_read_as_people_write_them_and_zero_is_refused() {
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_seconds("500ms"), Ok(1));
        assert_eq!(parse_seconds("30m"), Ok(1800));
        assert!(
            parse_duration("0s")
                .unwrap_err()
                .contains("longer than zero")
        );
        assert!(parse_duration("soon").unwrap_err().contains("15m"));
    }
}
