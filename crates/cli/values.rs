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

/// A task status as the store names it (`in-progress` is accepted for `in_progress`).
pub fn parse_status(text: &str) -> Result<baton_core::TaskStatus, String> {
    let wanted = text.trim().to_ascii_lowercase().replace(['-', ' '], "_");
    baton_core::TaskStatus::ALL
        .into_iter()
        .find(|status| status.as_str() == wanted)
        .ok_or_else(|| {
            let names: Vec<_> = baton_core::TaskStatus::ALL.map(|s| s.as_str()).into();
            format!("not a status; use one of {}", names.join(", "))
        })
}
