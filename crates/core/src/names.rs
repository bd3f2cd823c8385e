//! Validation of names that become file names: task ids, agent ids, run ids, signal names.
//!
//! One strict pattern for all of them keeps `.coordination/` safe from hostile input: a name
//! can never climb out of its folder, hide itself, or smuggle control characters into a log.

use crate::error::{Result, StoreError};

/// The lead's one name, wherever Baton names the lead: a question's recipient, a message's
/// sender or recipient, the voice of a paired device, the reviewer, the holder of a task the
/// lead moved on the board, the writer of a signal the lead wrote. Its log alone is named as
/// the source design names it ([`crate::journal::LEAD_LOG`]).
pub const LEAD: &str = "lead";

/// The longest name accepted, in bytes.
pub const MAX_NAME_LEN: usize = 64;

/// Checks that `value` is a safe name: 1 to 64 characters from `A-Z a-z 0-9 . _ -`, starting
/// with a letter or digit. `kind` ("task id", "agent id", …) goes into the error message.
pub fn validate_name(kind: &'static str, value: &str) -> Result<()> {
    let refuse = |reason: &str| {
        Err(StoreError::InvalidName {
            kind,
            value: value.chars().take(80).collect(),
            reason: reason.to_string(),
        })
    };
    if value.is_empty() {
        return refuse("it is empty");
    }
    if value.len() > MAX_NAME_LEN {
        return refuse(&format!("it is longer than {MAX_NAME_LEN} characters"));
    }
    if let Some(bad) = value
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
    {
        let shown = if bad.is_control() {
            format!("control character U+{:04X}", bad as u32)
        } else {
            format!("{bad:?}")
        };
        return refuse(&format!(
            "{shown} is not allowed; use letters, digits, '.', '_' and '-'"
        ));
    }
    if !value.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return refuse("it must start with a letter or digit");
    }
    if value.contains("..") {
        return refuse("'..' is not allowed");
    }
    Ok(())
}

/// Validates a task id.
pub fn validate_task_id(value: &str) -> Result<()> {
    validate_name("task id", value)
}

/// Validates an agent id (a worker's or the leader's name).
pub fn validate_agent_id(value: &str) -> Result<()> {
    validate_name("agent id", value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_ordinary_names() {
        for ok in [
            "task-1",
            "terminal-2",
            "a",
            "A.b_c-9",
            "task-20260119205434-ad93",
        ] {
            validate_name("x", ok).unwrap();
        }
        validate_name("x", &"a".repeat(MAX_NAME_LEN)).unwrap();
    }

    #[test]
    fn refuses_path_tricks_and_control_characters() {
        for bad in [
            "",
            "..",
            "../etc",
            "a/b",
            "a\\b",
            ".hidden",
            "-flag",
            "a..b",
            "a\nb",
            "a\0b",
            "tab\t",
            "space here",
            "é",
            "/abs",
        ] {
            let err = validate_name("agent id", bad).unwrap_err();
            assert!(
                err.to_string().starts_with("invalid agent id"),
                "{bad:?}: {err}"
            );
        }
    }

    #[test]
    fn refuses_over_long_names() {
        let err = validate_name("task id", &"a".repeat(MAX_NAME_LEN + 1)).unwrap_err();
        assert!(err.to_string().contains("longer than 64"));
    }

    #[test]
    fn names_control_characters_by_code_point() {
        let err = validate_name("task id", "a\u{1b}[31m").unwrap_err();
        assert!(err.to_string().contains("U+001B"), "{err}");
    }
}
