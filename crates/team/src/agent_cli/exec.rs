//! Any command, run by `sh -c` with the task in its environment and on its standard input (as
//! `worker loop` runs it): exit 0 completes the task, anything else fails it, and its output
//! is kept as lines.

use baton_core::Happened;
use serde_json::Value;

use super::{AgentCli, AgentRun, BuiltIn, CommandLine, Reading};

#[derive(Debug)]
pub struct Exec;

impl AgentCli for Exec {
    fn name(&self) -> &'static str {
        "exec"
    }

    fn built_in(&self) -> BuiltIn {
        BuiltIn {
            program: "",
            name_prefix: "ex",
            allowed_tools: &[],
            permission_mode: None,
        }
    }

    fn install_hint(&self) -> &'static str {
        "check the command"
    }

    /// A command plans by script: reports are not news to it.
    fn plans_from_news(&self) -> bool {
        false
    }

    fn invocation(&self, run: &AgentRun<'_>) -> CommandLine {
        CommandLine {
            program: "sh".to_string(),
            args: vec!["-c".to_string(), run.command.to_string()],
            env: Vec::new(),
            task_on_stdin: true,
        }
    }

    fn prints_json(&self) -> bool {
        false
    }

    /// Never called: its output is kept as lines.
    fn read(&self, _reading: &mut Reading, _line: &Value) -> Vec<Happened> {
        Vec::new()
    }

    fn reports_by_exit(&self) -> bool {
        true
    }

    fn runs_shell_command(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent_cli::OutputReader;
    use baton_core::transcript::Stream;

    #[test]
    fn output_and_stderr_stay_lines_and_escape_codes_go() {
        let mut reader = OutputReader::new(crate::agent_cli::AgentKind::named("exec").unwrap());
        let out = reader.line("{\"type\":\"result\"}", Stream::Stdout);
        assert!(matches!(
            &out[0],
            Happened::Line {
                stream: Stream::Stdout,
                ..
            }
        ));
        let err = reader.line("\u{1b}[31mboom\u{1b}[0m", Stream::Stderr);
        assert_eq!(
            err,
            [Happened::Line {
                stream: Stream::Stderr,
                text: "boom".into()
            }]
        );
        assert!(reader.line("   ", Stream::Stdout).is_empty());
    }

    #[test]
    fn its_command_runs_in_a_shell_with_the_task_on_stdin() {
        let line = Exec.invocation(&crate::agent_cli::testing::AgentRun {
            command: "make test",
            ..crate::agent_cli::testing::run()
        });
        assert_eq!(
            (line.program.as_str(), line.args.as_slice()),
            ("sh", &["-c".to_string(), "make test".to_string()][..])
        );
        assert!(line.task_on_stdin);
    }
}
