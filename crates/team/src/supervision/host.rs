//! The name this machine goes by in a team: in its workers' and planner's names on a store
//! shared across machines, and on every record its supervisor keeps.

/// The name this machine goes by in the team (`BATON_HOST`, else its host name), fit for an
/// agent name: letters, digits, `.`, `_` and `-`.
pub fn host_name() -> String {
    let raw = std::env::var("BATON_HOST")
        .ok()
        .filter(|h| !h.trim().is_empty())
        .or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".into());
    agent_safe_host(&raw)
}

/// `raw` as a host name fit for an agent name: letters, digits, `.`, `_` and `-`, at most 32,
/// starting with a letter or digit.
fn agent_safe_host(raw: &str) -> String {
    let clean: String = raw
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '-'
            }
        })
        .take(32)
        .collect();
    if clean.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        clean
    } else {
        format!("h{clean}")
    }
}

#[cfg(test)]
mod tests {
    use super::agent_safe_host;

    #[test]
    fn a_host_name_becomes_fit_for_an_agent_name() {
        assert_eq!(agent_safe_host("build-01.example\n"), "build-01.example");
        assert_eq!(agent_safe_host("my host/α"), "my-host--");
        assert_eq!(agent_safe_host("-dash"), "h-dash");
        assert_eq!(agent_safe_host(&"x".repeat(40)).len(), 32);
        assert!(baton_core::names::validate_agent_id(&agent_safe_host("weird:host!")).is_ok());
    }
}
