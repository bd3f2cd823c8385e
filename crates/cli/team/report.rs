//! `baton team report` for people: a row per task (what it took to coordinate), a line per
//! role, and the run's totals.

use baton_api::coordination::CoordinationReport;

/// The report as a table, the roles and the run under it.
pub fn coordination(report: &CoordinationReport) -> String {
    let mut lines = vec![format!(
        "{:<12} {:<11} {:>8} {:>6} {:>6} {:>9} {:>9} {:>7} {:>7} {:>6}  {:>10}",
        "TASK",
        "STATUS",
        "ATTEMPTS",
        "ROUNDS",
        "JUDGED",
        "QUESTIONS",
        "MESSAGES",
        "RETURNS",
        "WAITED",
        "LANDED",
        "COST"
    )];
    for task in &report.tasks {
        let waited = task.waited_for_dependencies_secs.unwrap_or(0.0) + task.waited_for_lead_secs;
        lines.push(format!(
            "{:<12} {:<11} {:>8} {:>6} {:>6} {:>9} {:>9} {:>7} {:>6.1}s {:>6}  {:>10}",
            crate::render::line(&task.task, 12),
            task.status.as_str(),
            task.attempts,
            format!("{}+{}", task.lead_rounds, task.judge_rounds),
            task.judgements,
            task.questions,
            task.messages,
            task.queue_returns,
            waited,
            if task.landed { "yes" } else { "" },
            format!("${:.4}", task.usage.cost_usd)
        ));
    }
    lines.push(String::new());
    lines.push(
        "ROUNDS are the lead's + the judge's; WAITED is for dependencies and for the lead.".into(),
    );
    for role in &report.roles {
        let share = role
            .token_share
            .map(|s| format!(", {:.0} % of the tokens", s * 100.0))
            .unwrap_or_default();
        lines.push(format!(
            "{}: {} attempt(s), ${:.4}{share}",
            role.role, role.attempts, role.usage.cost_usd
        ));
    }
    let run = &report.run;
    let per_landed = run
        .cost_per_landed_task_usd
        .map(|c| format!(" (${c:.4} a landed task)"))
        .unwrap_or_default();
    lines.push(format!(
        "Run: {} task(s), {} landed; ${:.4}{per_landed}; {} lead intervention(s), {} question(s), {} message(s).",
        run.tasks, run.landed, run.cost_usd, run.lead_interventions, run.questions, run.messages
    ));
    lines.join("\n")
}
