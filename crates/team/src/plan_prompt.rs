//! What a planner agent is told: the goal, what it may do (read, write the master plan, add,
//! edit and cancel its plan's tasks, each with acceptance), that the lead approves the plan,
//! and, in a later session, why it plans again (the lead's words, what failed) with the
//! master plan as its notes from before.

use baton_core::documents::DocumentStore;
use baton_core::{MAX_PLAN_TASKS, Task, TaskStore};

use crate::prompt::Reporting;

/// The most of a task's report a new session is shown (bytes).
const REPORT_SHOWN: usize = 300;
/// How many of the reasons for earlier sessions a new session is shown.
const EARLIER_SHOWN: usize = 5;
/// The most of the master plan a new session is shown (bytes).
const MASTER_PLAN_SHOWN: usize = 16 * 1024;

/// The prompt for planner `agent` at plan task `plan`.
pub(crate) fn plan_prompt(
    (store, documents): (&dyn TaskStore, &dyn DocumentStore),
    reporting: Reporting,
    agent: &str,
    plan: &Task,
) -> String {
    let id = &plan.id;
    // The tasks its goal's plan may have: the most, unless the lead allowed more.
    let limit = store
        .snapshot()
        .ok()
        .map(|(file, _)| file.plan_root(id))
        .and_then(|root| baton_core::plans::allowance(documents, &root).ok())
        .map_or(MAX_PLAN_TASKS, |allowed| allowed.tasks);
    let mut prompt = format!(
        "You are \"{agent}\", the planner of a team of coding agents coordinated by Baton. Your \
         job is the plan, not the code: read the project (it is read-only for you), then turn \
         this goal into tasks for the team's workers, each worked by one agent in its own git \
         worktree.\n\nGoal ({id}): {}\n\n\
         Plan it this way:\n\
         1. Write the master plan (the goal, the approach, the tasks and why they are in that \
         order): it is your notes, and your next session starts from it.\n\
         2. Add the tasks, at most {} in all: each with a description a worker can act on \
         alone, the files it will touch, its dependencies (the ids of tasks that must be done \
         first; tasks that touch the same files should depend on each other), a priority (1 \
         is the most urgent), hints, and its acceptance: how a reviewer will know it is done \
         (a test that passes, a behaviour to check).\n\
         3. Report your task done with a one-line summary of the plan, then stop. The lead \
         approves the plan before any worker starts; you may be asked to plan again.\n",
        plan.description, limit,
    );
    if let Some(parent) = plan.plan.as_deref() {
        let whole = store
            .task(parent)
            .ok()
            .flatten()
            .map(|t| t.description)
            .unwrap_or_default();
        prompt.push_str(&format!(
            "\nThis goal is one slice of a larger one, planned apart: plan {parent} (\"{whole}\") \
             holds the rest. Plan only this slice (its tasks may depend on that plan's), and \
             write it into the master plan as a section of its own, keeping the rest as it is.\n"
        ));
    }
    prompt.push_str(&match reporting {
        Reporting::Mcp => format!(
            "\nUse Baton's MCP tools: plan_write (the master plan, whole), task_add (with \
             description, files, depends, priority, hints, acceptance; sub_plan: true for a \
             large slice of the goal to plan apart later, once its dependencies are done), \
             task_edit and task_cancel (only your plan's tasks, before anyone works them), task_status and \
             task_list to read the board; then task_complete (agent \"{agent}\", task \"{id}\", \
             your summary).\n"
        ),
        Reporting::Cli => format!(
            "\nUse the `baton` command: `baton leader write-plan --stdin < FILE` (or the text \
             as an argument), `baton leader add-task \"DESCRIPTION\" --files A,B --depends \
             task-1 --priority 2 --hints \"…\" --acceptance \"…\"` (it prints the new id; \
             `--sub-plan` for a large slice of the goal to plan apart later, once its \
             dependencies are done), \
             `baton leader edit …` and `baton leader cancel …` (only your plan's tasks, before \
             anyone works them), `baton leader status` to read the board; then `baton worker \
             complete {agent} {id} \"SUMMARY\"`.\n"
        ),
    });
    if !plan.context.hints.trim().is_empty() {
        prompt.push_str(&why_again(&plan.context.hints));
        prompt.push_str(&reports(store, id));
        if let Ok(notes) = store.notes()
            && !notes.master_plan.trim().is_empty()
        {
            prompt.push_str(&format!(
                "\nYour master plan so far (change only what needs changing; tasks done stay \
                 done):\n{}\n",
                baton_core::text::prefix(notes.master_plan.trim(), MASTER_PLAN_SHOWN)
            ));
        }
    }
    prompt
}

/// Why the planner plans again: the latest reason the plan task was sent back with (each
/// sending back adds one to its hints, after a blank line), and the few before it, cut short,
/// as what came before.
fn why_again(hints: &str) -> String {
    let reasons: Vec<&str> = hints
        .trim()
        .split("\n\n")
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .collect();
    let Some((latest, before)) = reasons.split_last() else {
        return String::new();
    };
    let mut text = format!("\nYou are planning again. Why:\n{latest}\n");
    let earlier = &before[before.len().saturating_sub(EARLIER_SHOWN)..];
    if !earlier.is_empty() {
        text.push_str("\nWhat called for your earlier sessions, oldest first (dealt with then):\n");
        for reason in earlier {
            let first = reason.lines().next().unwrap_or_default();
            text.push_str(&format!(
                "- {}\n",
                baton_core::text::prefix(first, REPORT_SHOWN)
            ));
        }
    }
    text
}

/// Where each task of plan `plan` stands, with what the done ones reported (their workers'
/// summaries, cut short): the news a new session plans from.
fn reports(store: &dyn TaskStore, plan: &str) -> String {
    let text = task_lines(store, plan);
    match text.is_empty() {
        true => text,
        false => format!("\nYour plan's tasks so far:\n{text}"),
    }
}

/// One line for each task of plan `plan`'s tree (its sub-plans' tasks too): where it stands,
/// and what it reported when done.
pub(crate) fn task_lines(store: &dyn TaskStore, plan: &str) -> String {
    let Ok((file, _)) = store.snapshot() else {
        return String::new();
    };
    let mut text = String::new();
    for task in file.plan_tree(plan) {
        text.push_str(&format!(
            "- {} ({}): {}",
            task.id, task.status, task.description
        ));
        let output = task.result.as_ref().and_then(|r| r.output.as_deref());
        let said = baton_core::text::prefix(output.unwrap_or_default().trim(), REPORT_SHOWN);
        if !said.is_empty() {
            text.push_str(&format!("; it reported: {said}"));
        }
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use baton_core::{ClaimRequest, Completion, NewTask, TaskKind};

    use super::*;

    /// A new session is told why it plans again, where each of its tasks stands with what
    /// the done ones reported, and its master plan; the first session none of that.
    #[test]
    fn planning_again_the_planner_is_told_the_news_and_its_notes() {
        let dir = tempfile::tempdir().unwrap();
        let store = baton_folder::FolderStore::init(dir.path(), "goal", None).unwrap();
        let plan = store
            .add_task(NewTask {
                id: Some("plan-1".into()),
                description: "Ship it".into(),
                kind: TaskKind::Plan,
                ..NewTask::default()
            })
            .unwrap();
        let first = plan_prompt((&store, &store), Reporting::Cli, "planner", &plan);
        assert!(first.contains("Goal (plan-1): Ship it"), "{first}");
        assert!(first.contains("at most 50 in all"), "{first}");
        assert!(!first.contains("planning again"), "{first}");
        for id in ["a", "b"] {
            store
                .add_task(NewTask {
                    id: Some(id.into()),
                    description: format!("Part {id}"),
                    plan: Some("plan-1".into()),
                    ..NewTask::default()
                })
                .unwrap();
        }
        store.claim(&ClaimRequest::task("w1", "a")).unwrap();
        store.start("w1", "a").unwrap();
        let done = Completion {
            output: "wrote a.txt".into(),
            ..Completion::default()
        };
        store.complete("w1", "a", done).unwrap();
        store
            .write_master_plan("planner", "# Plan\n\na, then b")
            .unwrap();
        let mut again = plan;
        again.context.hints = "The lead said: smaller tasks\n\n1 task(s) of the plan failed".into();
        // The lead let the plan have more tasks: the session is told how many.
        baton_core::plans::hear_answer(&store, "plan-1", "q-1", true).unwrap();
        let prompt = plan_prompt((&store, &store), Reporting::Mcp, "planner", &again);
        assert!(prompt.contains("at most 100 in all"), "{prompt}");
        assert!(
            prompt.contains("You are planning again. Why:\n1 task(s) of the plan failed\n"),
            "{prompt}"
        );
        assert!(
            prompt.contains("earlier sessions, oldest first (dealt with then):\n- The lead said: smaller tasks\n"),
            "the reason before, apart: {prompt}"
        );
        assert!(
            prompt.contains("- a (done): Part a; it reported: wrote a.txt\n"),
            "{prompt}"
        );
        assert!(prompt.contains("- b (available): Part b\n"), "{prompt}");
        assert!(prompt.contains("# Plan\n\na, then b"), "{prompt}");
        assert!(prompt.contains("task_add"), "the MCP tools: {prompt}");
    }
}
