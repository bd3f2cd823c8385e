//! A plan's approval. With `--plan review` the lead is asked once, in the inbox, with the
//! plan's proposed tasks as a list and the graph of what waits for what; the answer `approve`
//! (or approving the tasks on the board, `baton leader approve`) lets the workers claim them,
//! anything else is the lead's word to the planner, which plans again with it. The lead may
//! edit or cancel proposed tasks before answering: what is still proposed is approved.

use std::sync::atomic::AtomicBool;

use baton_core::inbox::{self, About, NewQuestion, PlanLimit};
use baton_core::{LEAD, Task};

use crate::error::Result;
use crate::planning::{proposed, tasks_of, wait_for_change};
use crate::supervision::crew::Crew;

/// What the lead said of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Approved: its proposed tasks may be claimed (approved by `by`).
    Approved { by: String },
    /// Not approved: the lead's words, for the planner.
    Rejected { comment: String },
    /// The team stopped before the lead said.
    Stopped,
}

/// The answers that approve a plan, or let the planner go on (any case).
const APPROVING: [&str; 5] = ["approve", "approved", "yes", "ok", "go on"];

/// What an answer to a plan's question decides.
pub(crate) fn decision_of(answer: &str, by: &str) -> Decision {
    let said = answer.trim().trim_end_matches(['.', '!']);
    match APPROVING.iter().any(|a| a.eq_ignore_ascii_case(said)) {
        true => Decision::Approved { by: by.to_string() },
        false => Decision::Rejected {
            comment: answer.trim().to_string(),
        },
    }
}

/// Asks the lead whether the team may work `plan`'s proposed tasks, as planner `planner`, and
/// waits for the answer (or the tasks approved on the board) until `stop`. `asked` hears the
/// question's id once it is asked.
pub(crate) fn ask_lead(
    crew: &Crew<'_>,
    planner: &str,
    plan: &Task,
    stop: &AtomicBool,
    asked_as: impl FnOnce(&str),
) -> Result<Decision> {
    let tasks = tasks_of(crew.tasks, &plan.id)?;
    let waiting: Vec<&Task> = proposed(&tasks);
    let asked = inbox::ask(
        crew.documents,
        NewQuestion {
            agent: planner.to_string(),
            task: Some(plan.id.clone()),
            text: plan_text(plan, &waiting),
            choices: Vec::new(),
            about: About::Plan {
                plan: plan.id.clone(),
                tasks: waiting.iter().map(|t| t.id.clone()).collect(),
            },
        },
    )?;
    asked_as(&asked.id);
    // Approved on the board instead (`leader approve`, the desktop): nothing proposed left.
    let on_the_board = || -> baton_core::Result<Option<Decision>> {
        let now = tasks_of(crew.tasks, &plan.id)?;
        Ok(proposed(&now).is_empty().then(|| Decision::Approved {
            by: LEAD.to_string(),
        }))
    };
    let decision = wait_for_answer(crew, &asked.id, stop, on_the_board)?;
    if decision != Decision::Stopped && inbox::question(crew.documents, &asked.id)?.is_open() {
        let _ = inbox::close(
            crew.documents,
            &asked.id,
            "the plan was approved on the board",
        );
    }
    Ok(decision)
}

/// Asks the lead whether planner `planner` may plan `plan` on past its `limit` (`text` says
/// why), and waits for the answer until `stop`: `go on` (or `yes`, `approve`) lets it, anything
/// else ends the planning with the lead's words. `asked` hears the question's id. Only the
/// lead answers it: a planner told to answer the workers' questions answers none about limits.
pub(crate) fn ask_to_go_on(
    crew: &Crew<'_>,
    planner: &str,
    plan: &Task,
    (limit, text): (PlanLimit, &str),
    stop: &AtomicBool,
    asked_as: impl FnOnce(&str),
) -> Result<Decision> {
    let asked = inbox::ask(
        crew.documents,
        NewQuestion {
            agent: planner.to_string(),
            task: Some(plan.id.clone()),
            text: text.to_string(),
            choices: vec!["go on".into(), "stop".into()],
            about: About::Limit {
                plan: plan.id.clone(),
                limit,
            },
        },
    )?;
    asked_as(&asked.id);
    wait_for_answer(crew, &asked.id, stop, || Ok(None))
}

/// Waits until question `id` is answered (its decision), closed or `stop` is set (stopped:
/// the question closed), or `elsewhere` decides first.
fn wait_for_answer(
    crew: &Crew<'_>,
    id: &str,
    stop: &AtomicBool,
    mut elsewhere: impl FnMut() -> baton_core::Result<Option<Decision>>,
) -> Result<Decision> {
    let look = || -> baton_core::Result<Option<Decision>> {
        let question = inbox::question(crew.documents, id)?;
        if let inbox::QuestionState::Answered { answer, by, .. } = &question.state {
            return Ok(Some(decision_of(answer, by)));
        }
        if !question.is_open() {
            return Ok(Some(Decision::Stopped));
        }
        elsewhere()
    };
    let decided = wait_for_change(crew, &[inbox::QUESTIONS], stop, look)?;
    let decision = decided.unwrap_or(Decision::Stopped);
    if decision == Decision::Stopped {
        let _ = inbox::close(crew.documents, id, "the team stopped");
    }
    Ok(decision)
}

/// Approves what of `plan` is still proposed; the ids approved.
pub(crate) fn approve_all(crew: &Crew<'_>, plan: &str) -> Result<Vec<String>> {
    let tasks = tasks_of(crew.tasks, plan)?;
    let mut approved = Vec::new();
    for task in proposed(&tasks) {
        crew.tasks.approve(&task.id)?;
        approved.push(task.id.clone());
    }
    Ok(approved)
}

/// The question's text: the plan's tasks, a line each with what each waits for, and then the
/// graph's order (the tasks that can start at once first).
pub(crate) fn plan_text(plan: &Task, tasks: &[&Task]) -> String {
    let mut text = format!(
        "The plan for \"{}\" ({}): {} task(s).",
        plan.description,
        plan.id,
        tasks.len()
    );
    for task in tasks {
        text.push_str(&format!(
            "\n{} [p{}] {}",
            task.id, task.priority, task.description
        ));
        if !task.dependencies.is_empty() {
            text.push_str(&format!(" (after {})", task.dependencies.join(", ")));
        }
        if let Some(acceptance) = &task.acceptance {
            text.push_str(&format!("\n  done when: {acceptance}"));
        }
    }
    text.push_str(&format!("\nOrder: {}", layers(tasks)));
    text
}

/// The tasks in the order they can run: each layer waits only for the layers before it (or
/// for tasks outside the plan), written `a, b → c → d`.
fn layers(tasks: &[&Task]) -> String {
    let ids: Vec<&str> = tasks.iter().map(|t| t.id.as_str()).collect();
    let mut placed: Vec<&str> = Vec::new();
    let mut out: Vec<String> = Vec::new();
    while placed.len() < tasks.len() {
        let layer: Vec<&str> = tasks
            .iter()
            .filter(|t| !placed.contains(&t.id.as_str()))
            .filter(|t| {
                t.dependencies
                    .iter()
                    .all(|d| placed.contains(&d.as_str()) || !ids.contains(&d.as_str()))
            })
            .map(|t| t.id.as_str())
            .collect();
        if layer.is_empty() {
            // A cycle the store would have refused; said rather than looped on.
            out.push("(a cycle)".into());
            break;
        }
        out.push(layer.join(", "));
        placed.extend(layer);
    }
    out.join(" → ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: &str, deps: &[&str]) -> Task {
        let mut file = baton_core::TaskFile::new(baton_core::Timestamp::now());
        for dep in deps {
            if file.task(dep).is_none() {
                file.add_task(
                    baton_core::NewTask {
                        id: Some(dep.to_string()),
                        description: "d".into(),
                        ..Default::default()
                    },
                    baton_core::Timestamp::now(),
                )
                .unwrap();
            }
        }
        file.add_task(
            baton_core::NewTask {
                id: Some(id.to_string()),
                description: format!("do {id}"),
                dependencies: deps.iter().map(|d| d.to_string()).collect(),
                ..Default::default()
            },
            baton_core::Timestamp::now(),
        )
        .unwrap()
        .clone()
    }

    #[test]
    fn only_an_approving_word_approves_and_anything_else_is_the_leads_word() {
        for yes in ["approve", " Approve. ", "APPROVED", "yes", "ok!"] {
            assert_eq!(
                decision_of(yes, "lead"),
                Decision::Approved { by: "lead".into() },
                "{yes:?}"
            );
        }
        assert_eq!(
            decision_of("split task-2 in two", "lead"),
            Decision::Rejected {
                comment: "split task-2 in two".into()
            }
        );
        assert!(matches!(
            decision_of("approve but drop task-3", "lead"),
            Decision::Rejected { .. }
        ));
    }

    #[test]
    fn the_plan_is_listed_and_ordered_by_what_waits_for_what() {
        let (a, b) = (task("a", &[]), task("b", &[]));
        let c = task("c", &["a", "b"]);
        let d = task("d", &["c", "outside"]);
        let plan = task("plan-1", &[]);
        let text = plan_text(&plan, &[&d, &c, &a, &b]);
        assert!(text.contains("4 task(s)"), "{text}");
        assert!(text.contains("\nc [p5] do c (after a, b)"), "{text}");
        assert!(text.ends_with("Order: a, b → c → d"), "{text}");
    }
}
