//! What the planner hears while the workers work its plan, each once: a task's report (its
//! worker's summary, as soon as the task is done), a failure, and each time the merge queue
//! sent a task back (a conflict, a failing check, protected files, the judge's changes), and
//! the lead's answer when its plan reached the tasks it may have.
//!
//! A failure always calls the planner back: the plan cannot be carried out as it stands. The
//! rest calls back an agent planner, whose next session reads it (a session starts afresh from
//! the master plan, never one growing context) and may add follow-ups, edit or cancel what has
//! not started, or change nothing. A command planner plans by script, not from reports: it is
//! run again only for a failure, the lead's words or the judge's. News that comes while a
//! session runs waits for the next one, so a busy team's reports reach the planner in batches.

use std::collections::{BTreeMap, BTreeSet};

use baton_core::inbox::{About, PlanLimit, Question};
use baton_core::{Task, TaskStatus, Timestamp};

use crate::landing::merge_queue::QueueEntry;
use crate::planning::approval::{Decision, decision_of};

/// The most of a note (a failure's reason, why the queue sent a task back) the planner is
/// told (characters); the task's whole record is on the board.
const NOTE_SHOWN: usize = 300;

/// What the planner was told of its plan's tasks.
#[derive(Debug, Default)]
pub(crate) struct Told {
    /// The goal's plan, whose task limit the lead answers about.
    plan: String,
    /// It answers the workers' questions about its plan (`--planner-answers`).
    answers: bool,
    /// Each done task's report, by when it was completed (a task sent back and done again
    /// reports again).
    reports: BTreeMap<String, Timestamp>,
    /// Failed tasks: each once; the same failures again end the planning.
    failures: BTreeSet<String>,
    /// How many of each task's returns by the merge queue.
    returns: BTreeMap<String, u32>,
    /// The workers' questions it was given to answer.
    questions: BTreeSet<String>,
    /// The lead's answers about the plan's task limit it heard (in this run or before: the
    /// plan's allowance keeps them).
    limits: BTreeSet<String>,
}

/// What the planner has not been told yet.
#[derive(Debug, Default)]
pub(crate) struct News {
    pub reported: Vec<Task>,
    pub failed: Vec<Task>,
    pub returned: Vec<QueueEntry>,
    /// Questions in words the workers asked about the plan's tasks, still open, for a planner
    /// told to answer them.
    pub questions: Vec<Question>,
    /// The lead's answers to whether the plan may have more tasks.
    pub limits: Vec<Question>,
    /// The tasks the plan may have, once the lead's answers are heard.
    pub allowed: usize,
}

impl Told {
    /// Nothing told yet of goal's plan `plan`, but the lead's answers about its task limit
    /// heard before (`heard`); `answers`: it answers the workers' questions.
    pub fn new(plan: &str, answers: bool, heard: &[String]) -> Told {
        Told {
            plan: plan.to_string(),
            answers,
            limits: heard.iter().cloned().collect(),
            ..Told::default()
        }
    }

    /// What of `tasks` (a plan's, as the board has them), of `queue` (the merge queue's
    /// entries) and of `asked` (the inbox's questions) the planner has not been told: the
    /// failures and the lead's answers about its task limit, and with `everything` the
    /// reports, returns and (for a planner that answers them) the workers' open questions too.
    pub fn news(
        &self,
        tasks: &[Task],
        queue: &[QueueEntry],
        asked: &[Question],
        everything: bool,
    ) -> News {
        let failed = tasks
            .iter()
            .filter(|t| t.status == TaskStatus::Failed && !self.failures.contains(&t.id))
            .cloned()
            .collect();
        let limits: Vec<Question> = asked
            .iter()
            .filter(|q| q.answer().is_some() && !self.limits.contains(&q.id))
            .filter(|q| {
                matches!(&q.about, About::Limit { plan, limit: PlanLimit::Tasks }
                    if *plan == self.plan)
            })
            .cloned()
            .collect();
        if !everything {
            return News {
                failed,
                limits,
                ..News::default()
            };
        }
        let reported = tasks
            .iter()
            .filter(|t| t.status == TaskStatus::Done)
            .filter(|t| match (self.reports.get(&t.id), t.completed_at) {
                (Some(told), Some(at)) => *told != at,
                (None, _) => true,
                (Some(_), None) => false,
            })
            .cloned()
            .collect();
        let returned = queue
            .iter()
            .filter(|e| tasks.iter().any(|t| t.id == e.task))
            .filter(|e| e.returns > self.returns.get(&e.task).copied().unwrap_or(0))
            .cloned()
            .collect();
        let questions = asked
            .iter()
            .filter(|_| self.answers)
            .filter(|q| q.is_open() && matches!(q.about, About::Question))
            .filter(|q| {
                q.task
                    .as_ref()
                    .is_some_and(|id| tasks.iter().any(|t| &t.id == id))
            })
            .filter(|q| !self.questions.contains(&q.id))
            .cloned()
            .collect();
        News {
            reported,
            failed,
            returned,
            questions,
            limits,
            allowed: 0,
        }
    }

    /// `news` told.
    pub fn hear(&mut self, news: &News) {
        for task in &news.reported {
            if let Some(at) = task.completed_at {
                self.reports.insert(task.id.clone(), at);
            }
        }
        self.failures
            .extend(news.failed.iter().map(|t| t.id.clone()));
        for entry in &news.returned {
            self.returns.insert(entry.task.clone(), entry.returns);
        }
        self.questions
            .extend(news.questions.iter().map(|q| q.id.clone()));
        self.limits.extend(news.limits.iter().map(|q| q.id.clone()));
    }
}

impl News {
    pub fn is_empty(&self) -> bool {
        self.reported.is_empty()
            && self.failed.is_empty()
            && self.returned.is_empty()
            && self.questions.is_empty()
            && self.limits.is_empty()
    }

    /// Whether it holds a failure or the lead's answer about the task limit: the plan must
    /// change, and the session counts among the plan's sessions (reports and returns do not).
    pub fn must_plan(&self) -> bool {
        !self.failed.is_empty() || !self.limits.is_empty()
    }

    /// The news in words, for the planner's next session (its hints): what failed and why,
    /// and the tasks `stuck` behind the failures; what the merge queue sent back and why; which
    /// tasks reported (their reports are in the session's list of the plan's tasks).
    pub fn text(&self, stuck: &[String]) -> String {
        let mut parts = Vec::new();
        if !self.failed.is_empty() {
            let mut text = format!(
                "{} task(s) of the plan failed; plan what the goal still needs (follow-ups, a \
                 split, another order; cancel what can no longer start), or add nothing if it \
                 is met:",
                self.failed.len()
            );
            for task in &self.failed {
                let why = task
                    .failure_reason
                    .as_deref()
                    .unwrap_or("no reason recorded");
                text.push_str(&format!("\n- {}: {}", task.id, cut(why)));
            }
            if !stuck.is_empty() {
                text.push_str(&format!(
                    "\nWaiting on them, never to start as they are: {}",
                    stuck.join(", ")
                ));
            }
            parts.push(text);
        }
        for answer in &self.limits {
            let said = answer.answer().unwrap_or_default();
            parts.push(match decision_of(said, "lead") {
                Decision::Approved { .. } => format!(
                    "The lead lets your plan have more tasks: up to {} in all, its sub-plans' \
                     included. Add what you could not.",
                    self.allowed
                ),
                _ => format!(
                    "The lead keeps your plan at {} tasks, its sub-plans' included, and said: \
                     {}\nPlan within it (fewer, larger tasks), or leave the plan as it is.",
                    self.allowed,
                    cut(said)
                ),
            });
        }
        if !self.returned.is_empty() {
            let mut text = "The merge queue sent back to their workers:".to_string();
            for entry in &self.returned {
                let why = entry.note.as_deref().unwrap_or("no reason recorded");
                text.push_str(&format!(
                    "\n- {} (return {}): {}",
                    entry.task,
                    entry.returns,
                    cut(why)
                ));
            }
            parts.push(text);
        }
        if !self.reported.is_empty() {
            let ids: Vec<&str> = self.reported.iter().map(|t| t.id.as_str()).collect();
            parts.push(format!(
                "Done and reported since your last session: {} (what each reported is in the \
                 list of your plan's tasks).",
                ids.join(", ")
            ));
        }
        if !self.questions.is_empty() {
            let mut text = "The workers ask (the lead lets you answer what the plan, the project \
                            or the reports settle: `baton answer ID \"ANSWER\"`, MCP \
                            answer_question; leave the rest, which waits for the lead):"
                .to_string();
            for q in &self.questions {
                let task = q.task.as_deref().unwrap_or_default();
                text.push_str(&format!(
                    "\n- {} ({} on {task}): {}",
                    q.id,
                    q.agent,
                    cut(&q.text)
                ));
                if !q.choices.is_empty() {
                    text.push_str(&format!(" [choices: {}]", q.choices.join(" | ")));
                }
            }
            parts.push(text);
        }
        if self.failed.is_empty() {
            parts.push(
                "News of your plan. Decide whether the plan still holds: add follow-ups the \
                 reports call for, edit or cancel what has not started, rewrite the master \
                 plan; or change nothing. Then report your task done."
                    .into(),
            );
        }
        parts.join("\n")
    }
}

/// `text` cut to [`NOTE_SHOWN`] characters.
fn cut(text: &str) -> String {
    baton_core::text::shortened(text, NOTE_SHOWN)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::landing::merge_queue::QueueState;

    fn task(id: &str, status: TaskStatus, at: Option<&str>) -> Task {
        let mut task: Task = serde_json::from_value(serde_json::json!({
            "id": id,
            "description": format!("Part {id}"),
            "status": status,
            "created_at": "2026-11-28T09:00:00Z",
        }))
        .unwrap();
        task.completed_at = at.and_then(Timestamp::parse);
        task.failure_reason = (status == TaskStatus::Failed).then(|| "it broke".into());
        task
    }

    fn returned(id: &str, returns: u32) -> QueueEntry {
        QueueEntry {
            task: id.into(),
            worker: "w1".into(),
            state: QueueState::SentBack,
            note: Some("conflicts in a.txt".into()),
            returns,
        }
    }

    /// Each report, failure and return is news once; a task done again reports again; a
    /// command planner hears only the failures.
    #[test]
    fn each_piece_of_news_is_told_once() {
        let mut told = Told::new("plan-1", false, &[]);
        let tasks = vec![
            task("a", TaskStatus::Done, Some("2026-11-28T10:00:00Z")),
            task("b", TaskStatus::Failed, None),
            task("c", TaskStatus::InProgress, None),
        ];
        let queue = vec![returned("c", 1), returned("elsewhere", 3)];
        let only_failures = told.news(&tasks, &queue, &[], false);
        assert_eq!(only_failures.failed.len(), 1);
        assert!(only_failures.reported.is_empty() && only_failures.returned.is_empty());

        let news = told.news(&tasks, &queue, &[], true);
        assert_eq!(news.reported[0].id, "a");
        assert_eq!(news.failed[0].id, "b");
        assert_eq!(news.returned.len(), 1, "only the plan's tasks: {news:?}");
        let text = news.text(&["d".into()]);
        assert!(text.contains("1 task(s) of the plan failed"), "{text}");
        assert!(text.contains("\n- b: it broke"), "{text}");
        assert!(text.contains("never to start as they are: d"), "{text}");
        assert!(
            text.contains("\n- c (return 1): conflicts in a.txt"),
            "{text}"
        );
        assert!(text.contains("since your last session: a "), "{text}");
        told.hear(&news);
        assert!(told.news(&tasks, &queue, &[], true).is_empty());

        let again = vec![
            task("a", TaskStatus::Done, Some("2026-11-28T11:00:00Z")),
            task("b", TaskStatus::Failed, None),
        ];
        let news = told.news(&again, &[returned("c", 1)], &[], true);
        assert_eq!(news.reported.len(), 1, "a done again: {news:?}");
        assert!(!news.must_plan());
        let text = news.text(&[]);
        assert!(
            text.contains("Decide whether the plan still holds"),
            "{text}"
        );
    }

    fn question(id: &str, about: About, answer: Option<&str>) -> Question {
        let mut q: Question = serde_json::from_value(serde_json::json!({
            "id": id, "agent": "planner", "task": "plan-1", "text": "more?",
            "choices": ["go on", "keep the limit"], "about": about,
            "asked_at": "2026-11-28T09:00:00Z", "state": {"state": "open"},
        }))
        .unwrap();
        if let Some(answer) = answer {
            q.state = baton_core::inbox::QuestionState::Answered {
                answer: answer.into(),
                by: "lead".into(),
                at: Timestamp::now(),
            };
        }
        q
    }

    /// The lead's answer about the plan's task limit is news once, even for a command planner,
    /// and makes it plan; an open one, another plan's, one heard before, or a limit on
    /// sessions is not; workers' questions only for a planner that answers them.
    #[test]
    fn the_leads_answer_about_the_task_limit_is_news_once() {
        let limit = |plan: &str, limit| About::Limit {
            plan: plan.into(),
            limit,
        };
        let asked = vec![
            question("q-1", limit("plan-1", PlanLimit::Tasks), Some("go on")),
            question("q-2", limit("plan-1", PlanLimit::Tasks), None),
            question("q-3", limit("plan-2", PlanLimit::Tasks), Some("go on")),
            question("q-4", limit("plan-1", PlanLimit::Sessions), Some("go on")),
            question(
                "q-5",
                limit("plan-1", PlanLimit::Tasks),
                Some("no: fewer tasks"),
            ),
            question("q-6", About::Question, None),
        ];
        let tasks = vec![task("a", TaskStatus::InProgress, None)];
        let mut told = Told::new("plan-1", false, &["q-5".into()]);
        let mut news = told.news(&tasks, &[], &asked, false);
        let ids: Vec<&str> = news.limits.iter().map(|q| q.id.as_str()).collect();
        assert_eq!(ids, ["q-1"], "{news:?}");
        assert!(news.must_plan() && news.questions.is_empty());
        news.allowed = 100;
        let text = news.text(&[]);
        assert!(text.contains("up to 100 in all"), "{text}");
        told.hear(&news);
        assert!(told.news(&tasks, &[], &asked, true).is_empty());

        let mut answering = Told::new("plan-1", true, &["q-1".into()]);
        let mut news = answering.news(&tasks, &[], &asked, true);
        assert_eq!(news.limits[0].id, "q-5", "{news:?}");
        assert_eq!(news.questions.len(), 0, "q-6 is about no task of the plan");
        news.allowed = 50;
        let text = news.text(&[]);
        assert!(
            text.contains("keeps your plan at 50 tasks") && text.contains("said: no: fewer tasks"),
            "{text}"
        );
        answering.hear(&news);
        assert!(answering.news(&tasks, &[], &asked, true).is_empty());
    }
}
