//! A team's judge that is an agent (Claude Code, Codex, …; `[profiles.judge]` of any kind but
//! `exec`): one session per judgement, run as an attempt at the task with the role of judging
//! ([`baton_core::AttemptRole::Judging`]), so its transcript, cost and end are kept with the
//! task's other attempts (`team logs`, `team report`) and counted against the team's budget.
//!
//! It runs in a sandbox of its own: the trial merge's checkout shown read-only as its working
//! folder, the project read-only, no worktree, the network its profile allows (its model's),
//! and a door that lets it only read (every operation that changes anything is refused it, the
//! refusal in its transcript). It is told the task, its acceptance, what its worker reported
//! and the diff ([`crate::judge_prompt`]); its last words end with its verdict, read as an
//! `exec` judge's output is ([`crate::judge_prompt::verdict_of`]).

use baton_core::{Attempt, AttemptEnd, AttemptRole, ErrorKind, Task, Timestamp, Usage};
use baton_git::{BranchDiff, Trial, Worktree};

use crate::agent_home::AgentHome;
use crate::attempt_sandbox::{Seat, sandboxed};
use crate::error::{Result, TeamError};
use crate::judge_prompt::{judge_prompt, verdict_of};
use crate::landing::judge::Word;
use crate::launch::{Attempting, launch};
use crate::profile::Profile;
use crate::supervision::attempt::{AttemptPlan, run_attempt};
use crate::supervision::crew::Crew;

/// How much of a judge's last words an error quotes.
const WORDS_QUOTED: usize = 400;

/// Judge `name`'s word on `task`, whose branch's `diff` is merged in `trial`: one session of
/// the agent `profile` runs in the trial's checkout.
pub(crate) fn judge_by_agent(
    crew: &Crew<'_>,
    name: &str,
    profile: &Profile,
    task: &Task,
    trial: &Trial,
    diff: &BranchDiff,
) -> Result<Word> {
    let prompt = judge_prompt(name, task, &trial.target, diff);
    let said = judge_session(crew, name, profile, task, &prompt, Some(&trial.checkout))?;
    verdict_of(&said, diff).ok_or_else(|| no_verdict(&said))
}

/// A judge's answer without a verdict, as an error that quotes its end.
pub(crate) fn no_verdict(said: &str) -> TeamError {
    TeamError::new(
        ErrorKind::InvalidInput,
        format!(
            "it gave no verdict (its answer ends with `VERDICT: approve` or `VERDICT: changes`); \
             its last words: {:?}",
            baton_core::text::suffix(said.trim(), WORDS_QUOTED)
        ),
    )
}

/// One session of agent judge `name` (`profile`) at `task`, told `prompt`: in `checkout`
/// (shown read-only where it is) when it judges a task's trial merge, else in the project,
/// read-only. Its last words.
pub(crate) fn judge_session(
    crew: &Crew<'_>,
    name: &str,
    profile: &Profile,
    task: &Task,
    prompt: &str,
    checkout: Option<&Worktree>,
) -> Result<String> {
    let judges = crew.for_judge(name, profile.clone())?;
    let number = next_attempt(crew, &task.id)?;
    let session = judges.profile.kind.session(None);
    let result_path = crew.local.result_file(&task.id)?;
    let attempting = Attempting {
        agent: name,
        task,
        attempt: number,
        worktree: None,
        prompt,
        session: &session,
        result_path: &result_path,
        budget_left_usd: judges.profile.max_cost_usd,
        sandboxed: judges.profile.sandbox.enabled,
    };
    let mut launched = launch(&judges.profile, &judges.setting, &attempting);
    if let Some(checkout) = checkout {
        launched.workdir = checkout.workdir.clone();
    }
    let seat = Seat {
        agent: name,
        task: &task.id,
        worktree: None,
        judging: true,
        shown: checkout.map(|c| c.path.as_path()),
    };
    // Its agent's own state, made afresh for each session and removed after.
    let home = AgentHome::at(crew.local, &seat.folder()?);
    home.clear();
    let planned = sandboxed(&judges, &seat, launched)?;
    let finished = run_attempt(
        &judges,
        AttemptPlan {
            worker: name,
            task,
            number,
            launch: planned.launch,
            door: planned.door,
            cgroup: planned.cgroup,
            session: &session,
            spent_before: Usage::default(),
            worker_usage: Usage::default(),
            role: AttemptRole::Judging,
        },
    );
    home.clear();
    let record = finished?.record;
    crew.add_spend(&record.usage);
    if record.end != AttemptEnd::Completed {
        return Err(TeamError::new(
            ErrorKind::Spawn,
            format!(
                "its session (attempt {number} at {}) ended {:?}: {}",
                task.id,
                record.end,
                record.reason.as_deref().unwrap_or("no reason given")
            ),
        ));
    }
    Ok(record.last_message.unwrap_or_default())
}

/// The number of the next attempt at task `id`, after every one so far (its workers' and its
/// judge's); a judgement a stopped supervisor left running is recorded as stopped.
fn next_attempt(crew: &Crew<'_>, id: &str) -> Result<u32> {
    let attempts = crew.attempts(id)?;
    for left in attempts
        .iter()
        .filter(|a| !a.is_work() && a.end == AttemptEnd::Running)
    {
        let mut left = left.clone();
        left.end = AttemptEnd::Stopped;
        left.reason = Some("its supervisor stopped".into());
        left.ended_at.get_or_insert_with(Timestamp::now);
        crew.save_attempt(&left)?;
    }
    Ok(Attempt::next_number(&attempts))
}
