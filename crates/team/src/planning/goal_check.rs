//! The judge's last word on a plan: once each of its tasks has landed, the team's judge compares
//! the lead's branch with the goal and the master plan. Met: the plan is carried out and the
//! team ends. Not met: what is missing goes back to the planner as new work. The word is kept
//! as a judgement of the plan task (`baton review plan-N`), so the plan's outcome reads it.
//!
//! An `exec` judge is run as for a task (read-only, without a network) in the project, with the
//! plan task in its `BATON_TASK_*` variables (`BATON_TASK_KIND=plan`) and the brief (the goal,
//! the master plan, each task with its report) on its stdin; an agent judge is told the same
//! ([`goal_prompt`]) and ends with `VERDICT: met` or `VERDICT: missing`.

use baton_core::review::{self, Judgement, ReviewSettings};
use baton_core::{Task, TaskStore};

use crate::error::Result;
use crate::exec::TaskEnv;
use crate::landing::judge::{Judge, JudgeBy, run_judge_command};
use crate::landing::judge_agent::{judge_session, no_verdict};
use crate::supervision::crew::Crew;

/// The most of the master plan the judge is shown (bytes).
const MASTER_PLAN_SHOWN: usize = 32 * 1024;

/// The judge's word on the goal of plan task `plan`: met, and what it said.
pub(crate) fn judge_goal(team: &Crew<'_>, judge: &Judge, plan: &Task) -> Result<(bool, String)> {
    let brief = brief(team.tasks, plan);
    let (met, said) = match &judge.by {
        JudgeBy::Command(command) => {
            let settings = ReviewSettings::load(&review::review_settings_path(team.local.root()))?;
            let result_path = team.local.result_file(&plan.id)?;
            let env = TaskEnv {
                agent: &judge.name,
                task: plan,
                project_dir: team.local.project_dir(),
                result_path: &result_path,
                worktree: None,
            };
            let (met, said) = run_judge_command(command, &settings, &env, brief.into_bytes())?;
            (met, said.trim().to_string())
        }
        JudgeBy::Agent(profile) => {
            let prompt = goal_prompt(&judge.name, &brief);
            let said = judge_session(team, &judge.name, profile, plan, &prompt, None)?;
            crate::judge_prompt::split_verdict(&said).ok_or_else(|| no_verdict(&said))?
        }
    };
    let head = team
        .worktrees
        .as_ref()
        .and_then(|w| w.repo().commit_of("HEAD").ok())
        .unwrap_or_default();
    let judgement = Judgement {
        by: judge.name.clone(),
        at: baton_core::Timestamp::now(),
        head,
        approved: met,
        comment: baton_core::text::suffix(&said, review::MAX_COMMENT).to_string(),
    };
    review::record_judgement(team.documents, &plan.id, &judgement)?;
    Ok((met, said))
}

/// What the judge compares the lead's branch with: the goal, the master plan, and each task of
/// the plan with what it reported.
fn brief(store: &dyn TaskStore, plan: &Task) -> String {
    let mut text = format!("Goal ({}): {}\n", plan.id, plan.description.trim());
    if let Ok(notes) = store.notes()
        && !notes.master_plan.trim().is_empty()
    {
        text.push_str(&format!(
            "\nThe master plan:\n{}\n",
            baton_core::text::prefix(notes.master_plan.trim(), MASTER_PLAN_SHOWN)
        ));
    }
    text.push_str(&format!(
        "\nThe plan's tasks:\n{}",
        crate::plan_prompt::task_lines(store, &plan.id)
    ));
    text
}

/// The prompt for agent judge `agent` of a plan carried out, `brief` its goal and tasks.
fn goal_prompt(agent: &str, brief: &str) -> String {
    format!(
        "You are \"{agent}\", the judge of a team of coding agents coordinated by Baton. The \
         team's plan for a goal is carried out: each of its tasks has landed in the lead's \
         branch. Decide whether the goal is met.\n\n{brief}\n\
         Your working folder is the project as it is now, read-only: read the code and run \
         what only reads it.\n\n\
         End your answer with your verdict, on a line of its own:\n\
         VERDICT: met\n\
         or\n\
         VERDICT: missing\n\
         When something is missing, say what, in a few lines: the team's planner plans it. Do \
         not edit files, commit, or report any task: your answer is your whole part.\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_goal_prompt_holds_the_brief_and_asks_met_or_missing() {
        let prompt = goal_prompt("judge", "Goal (plan-1): ship it\n");
        assert!(prompt.contains("Goal (plan-1): ship it"), "{prompt}");
        assert!(
            prompt.contains("VERDICT: met\nor\nVERDICT: missing"),
            "{prompt}"
        );
        let said = "The readme is missing.\nVERDICT: missing";
        assert_eq!(
            crate::judge_prompt::split_verdict(said),
            Some((false, "The readme is missing.".to_string()))
        );
    }
}
