//! Routing: which workflow and agents suit a task. The source design's heuristics (quick-fix,
//! standard, strategic, security-review, devops) are the defaults of an editable workflows file,
//! `.coordination/orchestration/workflows.json`; rules are tried in order and the first whose
//! pattern (a case-insensitive regular expression) matches the task wins, else the fallback.

use std::path::Path;

use regex::RegexBuilder;
use serde::{Deserialize, Serialize};

use crate::error::{AgentError, Result};
use crate::registry::Registry;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkflowRule {
    pub workflow: String,
    /// Case-insensitive regular expression tried against the task.
    pub pattern: String,
    pub agents: Vec<String>,
    /// 0–100.
    pub confidence: u8,
    /// When to use it, for people.
    #[serde(default)]
    pub trigger: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fallback {
    pub workflow: String,
    pub agents: Vec<String>,
    pub confidence: u8,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Workflows {
    pub rules: Vec<WorkflowRule>,
    pub fallback: Fallback,
}

#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RoutingRecommendation {
    pub recommended_workflow: String,
    pub recommended_agents: Vec<String>,
    pub confidence: u8,
    pub reasoning: String,
}

fn rule(
    workflow: &str,
    pattern: &str,
    agents: &[&str],
    confidence: u8,
    trigger: &str,
) -> WorkflowRule {
    WorkflowRule {
        workflow: workflow.into(),
        pattern: pattern.into(),
        agents: agents.iter().map(|a| a.to_string()).collect(),
        confidence,
        trigger: trigger.into(),
    }
}

impl Default for Workflows {
    /// The source design's heuristics, in its order.
    fn default() -> Self {
        Workflows {
            rules: vec![
                rule(
                    "quick-fix",
                    "fix|bug|typo|null check",
                    &["implementer", "qa"],
                    90,
                    "Single-file fixes",
                ),
                rule(
                    "standard",
                    "implement|add feature|create",
                    &["analyst", "planner", "implementer", "qa"],
                    80,
                    "New features, 2-5 files",
                ),
                rule(
                    "strategic",
                    "should we|decision|choose between",
                    &[
                        "independent-thinker",
                        "high-level-advisor",
                        "task-generator",
                    ],
                    85,
                    "Decisions and direction",
                ),
                rule(
                    "security-review",
                    "security|vulnerability|threat|auth",
                    &["analyst", "security", "architect", "implementer", "qa"],
                    90,
                    "Authentication, user data, threats",
                ),
                rule(
                    "devops",
                    "deploy|ci|pipeline|workflow",
                    &["devops", "security", "qa"],
                    85,
                    "Build, CI and deployment",
                ),
            ],
            fallback: Fallback {
                workflow: "standard".into(),
                agents: ["analyst", "planner", "implementer", "qa"]
                    .map(String::from)
                    .to_vec(),
                confidence: 50,
            },
        }
    }
}

impl Workflows {
    /// The workflows file at `path`, or the defaults when there is none.
    pub fn load(path: &Path) -> Result<Workflows> {
        let bad = |message: String| AgentError::Workflows {
            path: path.to_path_buf(),
            message,
        };
        let workflows = match std::fs::read(path) {
            Ok(bytes) => serde_json::from_slice::<Workflows>(&bytes).map_err(|e| {
                bad(format!(
                    "not a valid workflows file at line {}, column {}: {e}",
                    e.line(),
                    e.column()
                ))
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Workflows::default()),
            Err(e) => return Err(bad(e.to_string())),
        };
        Ok(workflows)
    }

    /// Checks every rule: patterns compile, confidences are at most 100, agents exist.
    pub fn validate(&self, path: &Path, registry: &Registry) -> Result<()> {
        let bad = |message: String| AgentError::Workflows {
            path: path.to_path_buf(),
            message,
        };
        for (i, rule) in self.rules.iter().enumerate() {
            compile(&rule.pattern).map_err(|e| {
                bad(format!(
                    "rule {} ({}): pattern {:?} is invalid: {e}",
                    i + 1,
                    rule.workflow,
                    rule.pattern
                ))
            })?;
        }
        let all = self
            .rules
            .iter()
            .map(|r| (&r.workflow, r.confidence, &r.agents))
            .chain([(
                &self.fallback.workflow,
                self.fallback.confidence,
                &self.fallback.agents,
            )]);
        for (workflow, confidence, agents) in all {
            if confidence > 100 {
                return Err(bad(format!(
                    "workflow {workflow}: confidence {confidence} is over 100"
                )));
            }
            if let Some(unknown) = agents.iter().find(|a| registry.get(a).is_none()) {
                return Err(bad(format!(
                    "workflow {workflow} names unknown agent {unknown:?}"
                )));
            }
        }
        Ok(())
    }

    /// The first matching rule's workflow, or the fallback. Assumes [`Workflows::validate`].
    pub fn recommend(&self, task: &str) -> RoutingRecommendation {
        for rule in &self.rules {
            let Ok(pattern) = compile(&rule.pattern) else {
                continue;
            };
            if let Some(found) = pattern.find(task) {
                return RoutingRecommendation {
                    recommended_workflow: rule.workflow.clone(),
                    recommended_agents: rule.agents.clone(),
                    confidence: rule.confidence,
                    reasoning: format!(
                        "rule {:?} matched: pattern {:?} found {:?} in the task",
                        rule.workflow,
                        rule.pattern,
                        found.as_str()
                    ),
                };
            }
        }
        RoutingRecommendation {
            recommended_workflow: self.fallback.workflow.clone(),
            recommended_agents: self.fallback.agents.clone(),
            confidence: self.fallback.confidence,
            reasoning: format!(
                "no rule matched; fallback workflow {:?}",
                self.fallback.workflow
            ),
        }
    }
}

fn compile(pattern: &str) -> std::result::Result<regex::Regex, regex::Error> {
    RegexBuilder::new(pattern)
        .case_insensitive(true)
        .size_limit(1 << 20)
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_default_rule_and_the_fallback_route_as_the_source_design_does() {
        let workflows = Workflows::default();
        let cases = [
            ("Fix the typo in the README", "quick-fix", 90),
            ("Implement CSV export", "standard", 80),
            ("Should we move to Postgres?", "strategic", 85),
            (
                "Review the OAuth vulnerability report",
                "security-review",
                90,
            ),
            ("Deploy the staging pipeline", "devops", 85),
            ("Tidy the changelog", "standard", 50),
        ];
        for (task, workflow, confidence) in cases {
            let r = workflows.recommend(task);
            assert_eq!(r.recommended_workflow, workflow, "{task}");
            assert_eq!(r.confidence, confidence, "{task}");
        }
        let r = workflows.recommend("SECURITY audit");
        assert!(
            r.reasoning.contains("security-review") && r.reasoning.contains("SECURITY"),
            "{}",
            r.reasoning
        );
        assert!(
            workflows
                .recommend("Tidy")
                .reasoning
                .contains("no rule matched")
        );
    }

    #[test]
    fn a_broken_workflows_file_is_named_with_its_problem() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("workflows.json");
        let registry = Registry::load(dir.path(), &[]);
        std::fs::write(&path, "{ not json").unwrap();
        let err = Workflows::load(&path).unwrap_err().to_string();
        assert!(
            err.contains("workflows.json") && err.contains("line 1"),
            "{err}"
        );

        let mut workflows = Workflows::default();
        workflows.rules[0].pattern = "(unclosed".into();
        let err = workflows
            .validate(&path, &registry)
            .unwrap_err()
            .to_string();
        assert!(err.contains("rule 1 (quick-fix)"), "{err}");

        let mut workflows = Workflows::default();
        workflows.fallback.agents.push("ghost".into());
        let err = workflows
            .validate(&path, &registry)
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown agent \"ghost\""), "{err}");
        assert!(Workflows::default().validate(&path, &registry).is_ok());
    }
}
