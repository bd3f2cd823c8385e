//! The prompt an agent is started with: the one task it was given (description, files, hints,
//! what will judge it done, what the tasks it depends on reported), where to work (and what
//! its branch took from theirs, with a conflict between them as its first job), how to report
//! through Baton's MCP tools (or the `baton` command, for an agent without them), the file reservation rules, and,
//! on a later attempt, what the earlier one did last.

use baton_core::{Attempt, AttemptEnd, Task, TaskStore};
use baton_git::{DependencyWork, Worktree};

/// What a dependency's report may add to a prompt, at most.
const DEPENDENCY_REPORT: usize = 2000;

/// How the agent reaches Baton: its MCP tools, or the `baton` command in its shell (an agent
/// Baton cannot give an MCP server for one run).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reporting {
    Mcp,
    Cli,
}

/// Everything the prompt says, gathered by the worker.
pub struct TaskBrief<'a> {
    pub reporting: Reporting,
    pub agent: &'a str,
    pub task: &'a Task,
    pub worktree: Option<&'a Worktree>,
    /// The earlier attempts at the task, oldest first (its workers'; a judge's are not).
    pub earlier: &'a [Attempt],
    /// This attempt's number at the task (its judge's sessions are numbered among them).
    pub attempt: u32,
}

/// The prompt for an agent given one task.
pub fn task_prompt(store: &dyn TaskStore, brief: &TaskBrief<'_>) -> String {
    let TaskBrief {
        reporting,
        agent,
        task,
        worktree,
        earlier,
        attempt,
    } = brief;
    let id = &task.id;
    let mut prompt = format!(
        "You are worker agent \"{agent}\" in a team coordinated by Baton. Baton has claimed task \
         {id} for you and started it: work on this task only, as agent {agent}.\n\n\
         Task {id} (priority {}): {}\n",
        task.priority, task.description
    );
    if !task.context.files.is_empty() {
        prompt.push_str(&format!("Files: {}\n", task.context.files.join(", ")));
    }
    if !task.context.hints.trim().is_empty() {
        prompt.push_str(&format!("Hints: {}\n", task.context.hints.trim()));
    }
    if let Some(acceptance) = &task.acceptance {
        prompt.push_str(&format!(
            "Done when (how your work will be judged): {acceptance}\n"
        ));
    }
    if !task.dependencies.is_empty() {
        prompt.push_str("\nWhat the tasks it depends on reported:\n");
        for dependency in &task.dependencies {
            let report = store
                .result_report(dependency)
                .map(|r| shorten(r.trim(), DEPENDENCY_REPORT))
                .unwrap_or_else(|_| "(no report)".into());
            prompt.push_str(&format!("- {dependency}: {report}\n"));
        }
    }
    if let Some(worktree) = worktree {
        prompt.push_str(&format!(
            "\nYou work in {} on branch {}: make your changes there and commit them on that \
             branch (the lead reviews and merges it).\n",
            worktree.workdir.display(),
            worktree.branch
        ));
        prompt.push_str(&dependency_work(&worktree.dependencies));
    }
    prompt.push_str(&match reporting {
        Reporting::Mcp => mcp_rules(agent, id),
        Reporting::Cli => cli_rules(agent, id),
    });
    if let Some(last) = earlier.last() {
        prompt.push_str(&format!(
            "\nThis is attempt {attempt} at the task. The previous attempt ({}) {}.",
            last.agent,
            ended(last)
        ));
        if let Some(said) = &last.last_message {
            prompt.push_str(&format!(
                " Its last words: \"{}\"",
                shorten(said.trim(), DEPENDENCY_REPORT)
            ));
        }
        prompt.push_str(
            "\nIts work so far is kept: look at what is there (for example `git status` and \
             `git log`) and go on from it rather than starting over.\n",
        );
    }
    prompt
}

/// How to report, reserve, share and ask through Baton's MCP tools.
fn mcp_rules(agent: &str, id: &str) -> String {
    format!(
        "\nWhen the task is done, report it once with Baton's MCP tool task_complete (agent \
         \"{agent}\", task \"{id}\", a summary of what you did, and the files you modified and \
         created), then stop. If it cannot be done, call task_fail (agent \"{agent}\", task \
         \"{id}\") with why and what would unblock it, then stop. Share anything other agents \
         must know with the tool discover.\n\
         Files: the task's files are reserved for you. Before editing any other file, reserve \
         it with the tool paths_reserve (agent \"{agent}\"); a refusal (paths_held) means \
         another agent holds it: work around it, or fail the task saying which file you \
         need.\n\
         The lead: when you cannot settle something yourself, ask with the tool ask_lead (a \
         question, and choices when the answer is one of a few); it waits for the answer. \
         Messages for you arrive after your tool calls; reply with message_send.\n"
    )
}

/// The same through the `baton` command, for an agent without Baton's MCP tools.
fn cli_rules(agent: &str, id: &str) -> String {
    format!(
        "\nYou reach Baton with the `baton` command in your shell. When the task is done, \
         report it once with `baton worker complete {agent} {id} \"SUMMARY\" --modified FILE… \
         --created FILE…` (a summary of what you did, and the files you modified and created), \
         then stop. If it cannot be done, run `baton worker fail {agent} {id} \"WHY\"` saying \
         what would unblock it, then stop. Share anything other agents must know with `baton \
         discover --agent {agent} \"TEXT\"`.\n\
         Files: the task's files are reserved for you. Before editing any other file, reserve \
         it with `baton reserve --agent {agent} PATH`; exit code 7 means another agent holds \
         it: work around it, or fail the task saying which file you need.\n\
         The lead: when you cannot settle something yourself, ask with `baton ask --agent \
         {agent} \"QUESTION\"` (`--choice` for each answer when it is one of a few); it waits \
         for the answer and prints it. `baton inbox --agent {agent}` shows messages for you; \
         reply with `baton message send --as {agent} TO SUBJECT BODY`.\n"
    )
}

/// What the branch took from the dependencies' branches, and a conflict to resolve first.
fn dependency_work(work: &DependencyWork) -> String {
    let mut said = String::new();
    if !work.merged.is_empty() {
        said.push_str(&format!(
            "Your branch already has the work of the tasks it depends on: Baton merged {} into \
             it.\n",
            work.merged.join(", ")
        ));
    }
    if let Some(conflict) = &work.conflict {
        said.push_str(&format!(
            "First job: merging {} into your branch conflicts in {}. The merge is in progress \
             in your worktree: resolve those files, `git add` them and `git commit` before \
             anything else.",
            conflict.branch,
            conflict.files.join(", ")
        ));
        if !conflict.not_merged.is_empty() {
            said.push_str(&format!(
                " Then merge the rest of your dependencies' work the same way: `git merge \
                 --no-ff {}`.",
                conflict.not_merged.join(" ")
            ));
        }
        said.push('\n');
    }
    said
}

fn ended(attempt: &Attempt) -> String {
    let reason = attempt.reason.as_deref().unwrap_or("no reason recorded");
    match attempt.end {
        AttemptEnd::Crashed => format!("crashed: {reason}"),
        AttemptEnd::Unreported => format!("ended without reporting: {reason}"),
        AttemptEnd::Stopped | AttemptEnd::Running => {
            format!("was stopped before it finished: {reason}")
        }
        _ => format!("ended: {reason}"),
    }
}

/// `text` cut to `max` bytes at a character boundary, with `…` when it was cut.
fn shorten(text: &str, max: usize) -> String {
    match baton_core::text::prefix(text, max) {
        kept if kept.len() == text.len() => text.to_string(),
        kept => format!("{kept}…"),
    }
}

#[cfg(test)]
mod tests {
    use baton_core::NewTask;

    use super::*;

    /// An agent is told what will judge its task done, when the task says.
    #[test]
    fn the_prompt_says_what_will_judge_the_task_done() {
        let dir = tempfile::tempdir().unwrap();
        let store = baton_folder::FolderStore::init(dir.path(), "prompts", None).unwrap();
        let judged = store
            .add_task(NewTask {
                description: "Sort the list".into(),
                acceptance: Some("newest first".into()),
                ..NewTask::default()
            })
            .unwrap();
        let plain = store
            .add_task(NewTask {
                description: "Plain".into(),
                ..NewTask::default()
            })
            .unwrap();
        let prompt = |task: &Task| {
            task_prompt(
                &store,
                &TaskBrief {
                    reporting: Reporting::Mcp,
                    agent: "w1",
                    task,
                    worktree: None,
                    earlier: &[],
                    attempt: 1,
                },
            )
        };
        assert!(
            prompt(&judged).contains("\nDone when (how your work will be judged): newest first\n"),
            "{}",
            prompt(&judged)
        );
        assert!(!prompt(&plain).contains("Done when"), "{}", prompt(&plain));
    }
}
