//! Tool separation: `baton mcp --agent NAME` serves only the tools that agent's definition
//! allows, as the source design gives each agent only its own tools. A definition's `tools`
//! entries are tool names or patterns with `*`; Claude Code's MCP form
//! `mcp__<server>__<tool>` is understood (the server part is ignored). An empty list allows
//! every tool. Non-MCP entries (`Read`, `Bash`) match nothing here.

/// The tools an agent may use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolFilter {
    patterns: Vec<String>,
}

impl ToolFilter {
    pub fn new(tools: &[String]) -> ToolFilter {
        let patterns = tools
            .iter()
            .map(|t| {
                let t = t.trim();
                match t.strip_prefix("mcp__") {
                    // mcp__server__tool → tool (the server name may itself hold '_').
                    Some(rest) => rest
                        .split_once("__")
                        .map_or(rest, |(_, tool)| tool)
                        .to_string(),
                    None => t.to_string(),
                }
            })
            .filter(|t| !t.is_empty())
            .collect();
        ToolFilter { patterns }
    }

    pub fn allows(&self, tool: &str) -> bool {
        self.patterns.is_empty() || self.patterns.iter().any(|p| glob(p, tool))
    }
}

/// `*` matches any run of characters; everything else matches itself.
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for middle in &parts[1..parts.len() - 1] {
        match rest.find(middle) {
            Some(at) => rest = &rest[at + middle.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(tools: &[&str]) -> ToolFilter {
        ToolFilter::new(&tools.iter().map(|t| t.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn names_patterns_and_claude_code_mcp_names_select_tools() {
        let f = filter(&[
            "Read",
            "task_*",
            "mcp__baton__signal_wait",
            "mcp__play_wright__browser_*",
        ]);
        assert!(f.allows("task_claim"));
        assert!(f.allows("signal_wait"));
        assert!(f.allows("browser_navigate"));
        assert!(!f.allows("signal_write"));
        assert!(!f.allows("invoke_agent"));
        assert!(filter(&[]).allows("anything"), "no list means every tool");
        assert!(filter(&["*_parallel_*"]).allows("start_parallel_execution"));
        assert!(!filter(&["task_*_x"]).allows("task_x"));
    }
}
