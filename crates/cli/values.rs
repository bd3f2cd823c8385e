//! Parsers for argument values shared by several command groups.

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
