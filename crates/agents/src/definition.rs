//! One agent definition: a markdown file with YAML front matter, in the format coding agents
//! already use for subagents (`.claude/agents/*.md`: `name`, `description`, `tools`, `model`),
//! plus Baton's fields `role`, `delegates_to`, `called_by` and `artifact_directory`. The body
//! is the agent's instructions.
//!
//! Parsing never panics and never gives up on the whole registry: a bad file yields
//! [`Diagnostic`]s that name the file and line.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The models an agent can default to. `inherit` (use the caller's model) and full model ids
/// (`claude-…`) are accepted as written, as coding agents accept them.
pub const MODEL_ALIASES: [&str; 4] = ["sonnet", "opus", "haiku", "inherit"];

/// The model when a definition names none.
pub const DEFAULT_MODEL: &str = "sonnet";

/// Where a definition came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Source {
    /// Shipped with Baton (the source design's 18 agents).
    Builtin,
    File {
        path: PathBuf,
    },
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Builtin => f.write_str("built-in catalog"),
            Source::File { path } => write!(f, "{}", path.display()),
        }
    }
}

/// An agent, ready to be invoked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AgentDefinition {
    pub name: String,
    pub description: String,
    /// Tool names or patterns (`mcp__baton__*`); empty means every tool.
    pub tools: Vec<String>,
    pub model: String,
    pub role: String,
    pub delegates_to: Vec<String>,
    pub called_by: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub artifact_directory: Option<String>,
    /// The agent's instructions (the markdown body).
    pub instructions: String,
    pub source: Source,
}

/// A problem found in a definition, with where it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub source: Source,
    /// 1-based line in the file, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    pub message: String,
    /// Whether the definition was left out of the registry because of it.
    pub skipped: bool,
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.source, self.message)?,
            None => write!(f, "{}: {}", self.source, self.message)?,
        }
        if self.skipped {
            f.write_str(" (definition skipped)")?;
        }
        Ok(())
    }
}

/// `tools:` is a comma-separated string in Claude Code's format, or a YAML list.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum ToolsField {
    Text(String),
    List(Vec<String>),
}

#[derive(Debug, Deserialize)]
struct FrontMatter {
    name: Option<String>,
    description: Option<String>,
    tools: Option<ToolsField>,
    model: Option<String>,
    role: Option<String>,
    delegates_to: Option<Vec<String>>,
    called_by: Option<Vec<String>>,
    artifact_directory: Option<String>,
}

/// Parses a definition; on failure, says why and where.
pub fn parse(text: &str, source: Source) -> Result<AgentDefinition, Diagnostic> {
    let fail = |line: Option<usize>, message: String| Diagnostic {
        source: source.clone(),
        line,
        message,
        skipped: true,
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    if lines.next().map(str::trim_end) != Some("---") {
        return Err(fail(
            Some(1),
            "no front matter: the file must start with a `---` line".into(),
        ));
    }
    // The front matter runs from line 2 to the next `---` line.
    let mut yaml = String::new();
    let mut body_start = None;
    let mut offset = 0usize;
    for (i, line) in text.split_inclusive('\n').enumerate().skip(1) {
        if line.trim_end() == "---" {
            body_start = Some((i + 1, offset + line.len()));
            break;
        }
        yaml.push_str(line);
        offset += line.len();
    }
    let Some((_, yaml_len_with_close)) = body_start else {
        return Err(fail(
            Some(1),
            "the front matter is not closed: add a `---` line after it".into(),
        ));
    };
    let first_line_len = text.split_inclusive('\n').next().map_or(0, str::len);
    let body = &text[first_line_len + yaml_len_with_close..];

    let front: FrontMatter = match serde_yaml_ng::from_str(&yaml) {
        Ok(front) => front,
        Err(e) => {
            // Front matter starts on line 2 of the file.
            let line = e.location().map(|l| l.line() + 1);
            return Err(fail(line, format!("invalid YAML front matter: {e}")));
        }
    };
    let line_of = |key: &str| -> Option<usize> {
        yaml.lines()
            .position(|l| l.trim_start().starts_with(&format!("{key}:")))
            .map(|i| i + 2)
    };

    let Some(name) = front
        .name
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty())
    else {
        return Err(fail(Some(1), "missing `name` in the front matter".into()));
    };
    if let Err(e) = baton_core::names::validate_name("agent name", &name) {
        return Err(fail(line_of("name"), e.to_string()));
    }
    let model = front
        .model
        .map(|m| m.trim().to_string())
        .unwrap_or_else(|| DEFAULT_MODEL.to_string());
    if !(MODEL_ALIASES.contains(&model.as_str()) || model.starts_with("claude-")) {
        return Err(fail(
            line_of("model"),
            format!(
                "unknown model {model:?} for agent {name}: use one of {} or a full claude-… model id",
                MODEL_ALIASES.join(", ")
            ),
        ));
    }
    let tools = match front.tools {
        None => Vec::new(),
        Some(ToolsField::Text(text)) => text
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .collect(),
        Some(ToolsField::List(list)) => list.into_iter().map(|t| t.trim().to_string()).collect(),
    };
    let description = front.description.unwrap_or_default().trim().to_string();
    let role = front
        .role
        .map(|r| r.trim().to_string())
        .filter(|r| !r.is_empty())
        .unwrap_or_else(|| description.clone());
    Ok(AgentDefinition {
        name,
        description,
        tools,
        model,
        role,
        delegates_to: clean_list(front.delegates_to),
        called_by: clean_list(front.called_by),
        artifact_directory: front.artifact_directory,
        instructions: body.trim().to_string(),
        source,
    })
}

fn clean_list(list: Option<Vec<String>>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in list.unwrap_or_default() {
        let item = item.trim().to_string();
        if !item.is_empty() && !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// The line of `key:` in a definition file, for diagnostics found after parsing (unknown
/// delegation targets, duplicates).
pub fn line_of_key(path: &Path, key: &str) -> Option<usize> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines()
        .position(|l| l.trim_start().starts_with(&format!("{key}:")))
        .map(|i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str) -> Source {
        Source::File {
            path: PathBuf::from(name),
        }
    }

    #[test]
    fn claude_code_subagent_files_parse_with_defaults() {
        let text = "---\nname: reviewer\ndescription: Reviews code\ntools: Read, Grep, Glob\n---\nYou review code.\n";
        let agent = parse(text, file("reviewer.md")).unwrap();
        assert_eq!(agent.name, "reviewer");
        assert_eq!(agent.tools, ["Read", "Grep", "Glob"]);
        assert_eq!(agent.model, "sonnet");
        assert_eq!(agent.role, "Reviews code");
        assert_eq!(agent.instructions, "You review code.");
    }

    #[test]
    fn batons_fields_and_tool_lists_parse() {
        let text = "---\nname: lead\nmodel: opus\nrole: Leads\ntools:\n  - Read\n  - mcp__baton__*\ndelegates_to: [qa, qa, implementer]\ncalled_by:\n  - user\nartifact_directory: .agents/lead\ncolor: blue\n---\n# Lead\n";
        let agent = parse(text, file("lead.md")).unwrap();
        assert_eq!(agent.model, "opus");
        assert_eq!(agent.tools, ["Read", "mcp__baton__*"]);
        assert_eq!(agent.delegates_to, ["qa", "implementer"]);
        assert_eq!(agent.called_by, ["user"]);
        assert_eq!(agent.artifact_directory.as_deref(), Some(".agents/lead"));
    }

    #[test]
    fn bad_definitions_are_reported_with_their_line() {
        let cases = [
            ("no front matter\n", Some(1), "no front matter"),
            ("---\nname: x\n", Some(1), "not closed"),
            (
                "---\ndescription: no name\n---\n",
                Some(1),
                "missing `name`",
            ),
            (
                "---\nname: x\nmodel: gpt-9\n---\n",
                Some(3),
                "unknown model \"gpt-9\"",
            ),
            ("---\nname: x\ntools: [a\n---\n", Some(4), "invalid YAML"),
            ("---\nname: ../evil\n---\n", Some(2), "invalid agent name"),
        ];
        for (text, line, message) in cases {
            let error = parse(text, file("bad.md")).unwrap_err();
            assert_eq!(error.line, line, "{text:?}: {error}");
            assert!(error.message.contains(message), "{text:?}: {error}");
            assert!(error.to_string().starts_with("bad.md:"));
        }
    }
}
