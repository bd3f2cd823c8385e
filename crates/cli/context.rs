//! Where the user's own commands run their operations. The user is not an agent: a path they
//! name may lie anywhere (an MCP tool call's must lie inside the project), relative paths are
//! taken from the folder they are in, and `--force` may replace a file that is not a signal.

use std::path::{Path, PathBuf};

use baton_api::{Context, Error, OpenProject, Operation};
use baton_core::{Confinement, ForeignFile, Layout};
use baton_live::WatchMode;

/// The agent this process runs a command for when it runs behind an attempt's door (the door
/// sets it; the CLI's `door` module says what that allows).
pub fn door_guest() -> Option<String> {
    std::env::var(baton_door::CALLER_ENV)
        .ok()
        .filter(|a| !a.is_empty())
}

/// Behind an attempt's door, the task that attempt works (the door sets it).
pub fn door_task() -> Option<String> {
    door_guest()?;
    std::env::var(baton_door::TASK_ENV)
        .ok()
        .filter(|t| !t.is_empty())
}

/// Behind an attempt's door, whether its agent only reads (a team's judge; the door says so).
pub fn door_reads_only() -> bool {
    door_guest().is_some() && std::env::var(baton_door::READS_ONLY_ENV).is_ok_and(|v| v == "1")
}

/// The task of the attempt this process runs in: behind its door, as the door says; without a
/// sandbox, as the attempt's marks say (`BATON_ATTEMPT=TASK/N`, with `BATON_AGENT`).
pub fn attempt_task() -> Option<String> {
    if door_guest().is_some() {
        return door_task();
    }
    std::env::var("BATON_AGENT")
        .ok()
        .filter(|a| !a.is_empty())?;
    let attempt = std::env::var("BATON_ATTEMPT").ok()?;
    let (task, _) = attempt.rsplit_once('/')?;
    Some(task.to_string()).filter(|t| !t.is_empty())
}

/// Behind an attempt's door, the folder the agent's paths must stay in: its working folder
/// (the door says which), not the lead's checkout, `.git/` or `.coordination/`.
pub fn door_workdir(local: &Layout) -> Option<PathBuf> {
    door_guest()?;
    Some(
        std::env::var_os(baton_door::WORKDIR_ENV)
            .map(PathBuf::from)
            .unwrap_or_else(|| local.project_dir().to_path_buf()),
    )
}

/// Everywhere: the user may name any path. Behind an attempt's door the caller is an agent,
/// and its paths stay inside its working folder.
pub fn user_confinement(local: &Layout) -> Result<Confinement, Error> {
    match door_workdir(local) {
        Some(workdir) => Ok(Confinement::project(&workdir)?),
        None => Ok(Confinement::anywhere(local.project_dir())),
    }
}

/// Runs `op` in the user's context on `project`.
pub fn as_user<T>(
    project: &OpenProject,
    mode: WatchMode,
    foreign_files: ForeignFile,
    op: impl FnOnce(&Context) -> Result<T, Error>,
) -> Result<T, Error> {
    let confinement = user_confinement(project.local())?;
    let mut cx = project.context(&confinement);
    cx.caller = door_guest();
    cx.attempt = door_task();
    cx.reads_only = door_reads_only();
    if cx.caller.is_none() {
        as_unsandboxed_planner(&mut cx);
    }
    cx.watch_mode = mode;
    cx.foreign_files = foreign_files;
    op(&cx)
}

/// Whether agent `caller`, speaking from an attempt at `attempt`, is its team's planner.
pub fn is_planner(project: &OpenProject, caller: Option<&str>, attempt: Option<&str>) -> bool {
    let confinement = Confinement::anywhere(project.local().project_dir());
    let mut cx = project.context(&confinement);
    cx.caller = caller.map(str::to_string);
    cx.attempt = attempt.map(str::to_string);
    baton_api::planning::planner_of(&cx).is_ok_and(|plan| plan.is_some())
}

/// A team's planner run without a sandbox plans as its planner all the same (its tasks
/// proposed, of its plan): an agent whose attempt's marks name the plan task it holds. Any
/// other process is the user, as it was.
fn as_unsandboxed_planner(cx: &mut Context) {
    let (Ok(agent), Some(task)) = (std::env::var("BATON_AGENT"), attempt_task()) else {
        return;
    };
    cx.caller = Some(agent);
    cx.attempt = Some(task);
    if !baton_api::planning::planner_of(cx).is_ok_and(|plan| plan.is_some()) {
        cx.caller = None;
        cx.attempt = None;
    }
}

/// Runs the operation `op` as the user, prints its result (`render` for people, the result
/// itself with `--json`) and exits 0: what most commands are.
pub fn operate<O: Operation>(
    project: &OpenProject,
    mode: WatchMode,
    json: bool,
    op: O,
    render: impl FnOnce(&O::Output) -> String,
) -> Result<u8, Error> {
    operate_exiting(project, mode, json, op, render, |_| 0)
}

/// [`operate`], exiting as `exit` says of the result (a command whose answer may be a
/// refusal, such as a denied tool call).
pub fn operate_exiting<O: Operation>(
    project: &OpenProject,
    mode: WatchMode,
    json: bool,
    op: O,
    render: impl FnOnce(&O::Output) -> String,
    exit: impl FnOnce(&O::Output) -> u8,
) -> Result<u8, Error> {
    let out = run_as_user(project, mode, op)?;
    crate::output::emit(json, &out, || render(&out));
    Ok(exit(&out))
}

/// [`operate`], its text through the user's pager on a terminal ([`crate::output::emit_paged`]).
pub fn operate_paged<O: Operation>(
    project: &OpenProject,
    mode: WatchMode,
    json: bool,
    op: O,
    render: impl FnOnce(&O::Output) -> String,
) -> Result<u8, Error> {
    let out = run_as_user(project, mode, op)?;
    crate::output::emit_paged(json, &out, || render(&out));
    Ok(0)
}

/// The operation's result, run as the user after checking the caller may run it.
fn run_as_user<O: Operation>(
    project: &OpenProject,
    mode: WatchMode,
    op: O,
) -> Result<O::Output, Error> {
    as_user(project, mode, ForeignFile::Keep, |cx| {
        baton_api::CatalogueEntry::of::<O>().check_caller(cx)?;
        op.run(cx)
    })
}

/// A path the user typed, as an operation's request names it: absolute, from `cwd` when
/// relative. A path that is not UTF-8 is refused rather than changed into another one.
pub fn user_path(cwd: &Path, path: &Path) -> Result<String, Error> {
    let path = cwd.join(path);
    path.to_str()
        .map(str::to_string)
        .ok_or_else(|| Error::input("path", format!("{} is not valid UTF-8", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_path_is_taken_from_the_folder_and_a_non_utf8_one_is_refused() {
        let cwd = Path::new("/work/here");
        assert_eq!(
            user_path(cwd, Path::new("sprint/.done")).unwrap(),
            "/work/here/sprint/.done"
        );
        assert_eq!(user_path(cwd, Path::new("/abs/x")).unwrap(), "/abs/x");
        use std::os::unix::ffi::OsStrExt;
        let bad = Path::new(std::ffi::OsStr::from_bytes(b"sig\xff"));
        let err = user_path(cwd, bad).unwrap_err();
        assert_eq!(err.kind(), baton_core::ErrorKind::InvalidInput, "{err}");
    }
}
