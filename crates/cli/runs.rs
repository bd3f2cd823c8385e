//! What each command runs, as the door reads it: the catalogue operations it calls, each of
//! which declares who may call it ([`baton_api::Callers`]), or work of its own outside the
//! catalogue (files it reads or writes on the lead's side, a server, a browser, the agent
//! definitions), which the door allows an agent only where it says so.
//!
//! This describes the commands; it decides nothing. Who may call an operation is the
//! catalogue's word alone, and the operation checks its caller again when it runs.

use baton_api::{self as api, Operation};

use crate::args::{Command, FilesCommand, LeaderCommand};
use crate::inbox::MessageCommand;
use crate::live::{RunCommand, SignalCommand};
use crate::review::ReviewCommand;
use crate::team::TeamCommand;
use crate::worker::WorkerCommand;

/// What a command runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandRuns {
    /// These operations of the catalogue, and nothing else.
    Operations(&'static [&'static str]),
    /// Work of its own, outside the catalogue.
    Local,
}

/// What `command` runs.
pub fn runs(command: &Command) -> CommandRuns {
    use CommandRuns::{Local, Operations};
    match command {
        Command::Leader(command) => match command {
            LeaderCommand::Status { watch: false, .. } => Operations(&[api::tasks::Status::NAME]),
            LeaderCommand::Status { watch: true, .. } => Local,
            LeaderCommand::AddTask(_) => Operations(&[api::tasks::AddTask::NAME]),
            LeaderCommand::Edit(_) => Operations(&[api::tasks::EditTask::NAME]),
            LeaderCommand::WritePlan(_) => Operations(&[api::planning::PlanWrite::NAME]),
            LeaderCommand::Aggregate => Operations(&[api::tasks::AggregateResults::NAME]),
            LeaderCommand::Cancel(_) => Operations(&[api::tasks::Cancel::NAME]),
            LeaderCommand::Move(_) => Operations(&[api::tasks::MoveTask::NAME]),
            LeaderCommand::Reset(_) => Operations(&[api::tasks::Reset::NAME]),
            LeaderCommand::Approve(_) => Operations(&[api::tasks::Approve::NAME]),
            LeaderCommand::Agents => Operations(&[api::agents::AgentsOverview::NAME]),
            LeaderCommand::Merge(_) => Operations(&[api::worktrees::Merge::NAME]),
            LeaderCommand::Doctor(_) => Operations(&[api::tasks::Doctor::NAME]),
            LeaderCommand::Archive(_) => Operations(&[api::tasks::Archive::NAME]),
            LeaderCommand::Init { .. } => Local,
        },
        Command::Worker(command) => match command {
            WorkerCommand::List(_) => Operations(&[api::tasks::ListTasks::NAME]),
            WorkerCommand::Claim(_) => Operations(&[api::tasks::Claim::NAME]),
            WorkerCommand::Start(_) => Operations(&[api::tasks::Start::NAME]),
            WorkerCommand::Complete(_) => Operations(&[api::tasks::Complete::NAME]),
            WorkerCommand::Fail(_) => Operations(&[api::tasks::Fail::NAME]),
            WorkerCommand::Release(_) => Operations(&[api::tasks::Release::NAME]),
            WorkerCommand::Heartbeat(_) => Operations(&[api::tasks::Heartbeat::NAME]),
            WorkerCommand::Loop(_) | WorkerCommand::Keepalive { .. } => Local,
        },
        Command::Team(command) => match command {
            TeamCommand::Up(_) => Operations(&[baton_team::TeamUp::NAME]),
            TeamCommand::Status(_) => Operations(&[api::team::TeamStatus::NAME]),
            TeamCommand::Report(_) => Operations(&[api::coordination::TeamReportRequest::NAME]),
            TeamCommand::Logs(_) => Operations(&[api::team::TeamTranscript::NAME]),
            TeamCommand::Stop(_) => Operations(&[api::team::TeamStop::NAME]),
            TeamCommand::Pause(_) => Operations(&[api::team::TeamPause::NAME]),
            TeamCommand::Resume(_) => Operations(&[api::team::TeamResume::NAME]),
            TeamCommand::Profiles | TeamCommand::Supervise => Local,
        },
        Command::Inbox(_) => Operations(&[api::inbox::InboxRead::NAME]),
        Command::Ask(_) => Operations(&[api::inbox::AskLead::NAME]),
        Command::Answer(_) => Operations(&[api::inbox::AnswerQuestion::NAME]),
        Command::Approve(_) => Operations(&[api::approvals::ApproveToolCall::NAME]),
        Command::Review(args) => match &args.command {
            None => Operations(&[api::review::TaskReview::NAME]),
            Some(ReviewCommand::Comment(_)) => Operations(&[api::review::CommentOnLine::NAME]),
            Some(ReviewCommand::RequestChanges(_)) => {
                Operations(&[api::review::RequestChanges::NAME])
            }
            Some(ReviewCommand::Check(_)) => Operations(&[api::check::RunCheck::NAME]),
            Some(ReviewCommand::Waiting(_)) => Operations(&[api::worktrees::ReviewWaiting::NAME]),
        },
        Command::Message(MessageCommand::Send(_)) => Operations(&[api::inbox::MessageSend::NAME]),
        Command::Message(MessageCommand::Ack(_)) => Operations(&[api::inbox::MessageAck::NAME]),
        Command::Discover(_) => Operations(&[api::tasks::Discover::NAME]),
        Command::Files(FilesCommand::Reserve(_)) | Command::Reserve(_) => {
            Operations(&[api::reservations::Reserve::NAME])
        }
        Command::Files(FilesCommand::Unreserve(_)) | Command::Unreserve(_) => {
            Operations(&[api::reservations::Unreserve::NAME])
        }
        Command::Files(FilesCommand::List) | Command::Reservations => {
            Operations(&[api::reservations::ListReservations::NAME])
        }
        Command::Files(FilesCommand::Check(_)) | Command::CheckPaths(_) => {
            Operations(&[api::reservations::CheckPaths::NAME])
        }
        Command::Logs { .. } => Operations(&[api::tasks::Logs::NAME]),
        Command::Run(RunCommand::New(_)) => Operations(&[api::signals::NewRun::NAME]),
        Command::Run(RunCommand::List) => Operations(&[api::signals::ListRuns::NAME]),
        Command::Signal(command) => match command {
            SignalCommand::Write(_) => Operations(&[api::signals::WriteSignal::NAME]),
            SignalCommand::Clear(_) => Operations(&[api::signals::ClearSignal::NAME]),
            SignalCommand::List(_) => Operations(&[api::signals::ListSignals::NAME]),
            SignalCommand::Wait { .. } => Operations(&[api::signals::WaitSignals::NAME]),
        },
        Command::Files(FilesCommand::Hooks(_))
        | Command::Hooks(_)
        | Command::Prompt(_)
        | Command::Setup(_)
        | Command::ClaudeHook { .. }
        | Command::Watch
        | Command::Agents(_)
        | Command::Completions { .. }
        | Command::ExitCodes
        | Command::Manpages { .. }
        | Command::Reference { .. }
        | Command::Invoke(_)
        | Command::Handoff(_)
        | Command::Parallel(_)
        | Command::Route { .. }
        | Command::Mcp { .. }
        | Command::Browser(_)
        | Command::Connect { .. }
        | Command::Store(_)
        | Command::Serve(_) => Local,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn runs_of(line: &str) -> CommandRuns {
        let cli = crate::args::Cli::try_parse_from(
            std::iter::once("baton").chain(line.split_whitespace()),
        )
        .unwrap();
        runs(&cli.command)
    }

    #[test]
    fn a_command_runs_its_operation_or_work_of_its_own() {
        assert_eq!(
            runs_of("leader merge task-1"),
            CommandRuns::Operations(&["task_merge"])
        );
        assert_eq!(
            runs_of("review task-1"),
            CommandRuns::Operations(&["task_review"])
        );
        // Approving a plan is the lead's (`task_approve` is no agent's): behind an attempt's
        // door it is refused as that operation, not run as something local.
        assert_eq!(
            runs_of("leader approve --all"),
            CommandRuns::Operations(&["task_approve"])
        );
        assert_eq!(runs_of("leader status --watch"), CommandRuns::Local);
        assert_eq!(runs_of("agents list"), CommandRuns::Local);
    }
}
