//! File reservations on the command line: `reserve`, `unreserve`, `reservations`,
//! `check-paths`, and `hooks install` (a git pre-commit hook that runs `check-paths` on what a
//! commit touches). Each calls one `baton-api` operation; the hook is the one thing written
//! outside `.coordination/`, into the repository's `.git/hooks/`, because the user asked.

use std::io::Read;
use std::path::{Path, PathBuf};

use baton_api::reservations::{CheckPaths, ListReservations, PathCheck, Reserve, Unreserve};
use baton_api::{Error, OpenProject, Operation, exit};
use baton_core::{ErrorKind, ForeignFile, Reservation};
use baton_live::WatchMode;
use clap::Subcommand;

use crate::context::as_user;
use crate::output::emit;

/// `baton check-paths`: the `paths_check` request, and its files from stdin.
#[derive(Debug, clap::Args)]
pub struct CheckPathsArgs {
    #[command(flatten)]
    pub request: CheckPaths,
    /// Read the files from stdin, one per line (as `git diff --name-only` prints them).
    #[arg(long)]
    pub stdin: bool,
}

#[derive(Debug, Subcommand)]
pub enum HooksCommand {
    /// Add a git pre-commit hook that refuses a commit touching files another agent holds
    /// exclusively (the committing agent is $BATON_AGENT). An existing hook is kept and run
    /// first. `git commit --no-verify` skips it, as with any hook.
    Install,
}

pub fn reserve(
    project: &OpenProject,
    request: Reserve,
    mode: WatchMode,
    json: bool,
) -> Result<u8, Error> {
    crate::context::operate(project, mode, json, request, |reservation| {
        format!("Reserved {}", describe(reservation))
    })
}

pub fn unreserve(
    project: &OpenProject,
    op: Unreserve,
    mode: WatchMode,
    json: bool,
) -> Result<u8, Error> {
    crate::context::operate(project, mode, json, op, |out| {
        if out.released.is_empty() {
            "Nothing to give back".to_string()
        } else {
            let ids: Vec<&str> = out.released.iter().map(|r| r.id.as_str()).collect();
            format!("Gave back {}", ids.join(", "))
        }
    })
}

pub fn list(project: &OpenProject, mode: WatchMode, json: bool) -> Result<u8, Error> {
    let out = as_user(project, mode, ForeignFile::Keep, |cx| {
        ListReservations {}.run(cx)
    })?;
    emit(json, &out, || {
        if out.reservations.is_empty() {
            return "No files are reserved.".to_string();
        }
        out.reservations
            .iter()
            .map(describe)
            .collect::<Vec<_>>()
            .join("\n")
    });
    Ok(0)
}

pub fn check_paths(
    project: &OpenProject,
    args: CheckPathsArgs,
    mode: WatchMode,
    json: bool,
) -> Result<u8, Error> {
    let CheckPathsArgs { mut request, stdin } = args;
    if stdin {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| baton_core::StoreError::io("stdin", e))?;
        request.paths.extend(
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(String::from),
        );
    }
    if request.paths.is_empty() {
        // Nothing to check (an empty commit): nothing is held.
        let none = PathCheck {
            free: true,
            held: Vec::new(),
        };
        emit(json, &none, || "No files given; none held.".to_string());
        return Ok(0);
    }
    let out = as_user(project, mode, ForeignFile::Keep, |cx| request.run(cx))?;
    emit(json, &out, || {
        if out.free {
            "No other agent holds these files.".to_string()
        } else {
            out.held
                .iter()
                .map(baton_core::reservations::describe_hold)
                .collect::<Vec<_>>()
                .join("\n")
        }
    });
    Ok(if out.free { 0 } else { exit::FILES_HELD.code })
}

/// One reservation in a line: `r-1  w1 (task-3)  src/api/**  exclusive  since … until …`.
fn describe(r: &Reservation) -> String {
    let holder = match &r.task {
        Some(task) => format!("{} ({task})", r.agent),
        None => r.agent.clone(),
    };
    format!(
        "{}  {holder}  {}  {}  since {}{}{}",
        r.id,
        r.paths.join(", "),
        if r.shared { "shared" } else { "exclusive" },
        r.since,
        r.expires_at
            .map(|end| format!(" until {end}"))
            .unwrap_or_default(),
        r.reason
            .as_deref()
            .map(|reason| format!(": {reason}"))
            .unwrap_or_default()
    )
}

/// The hook's text: the earlier hook first, then the check of the staged files, by the
/// `baton` at `@BATON@` (the one that installed it, so a GUI git client or a shell without it
/// on PATH still checks), else the one on PATH, else a refusal that says what to do.
const HOOK: &str = r#"#!/bin/sh
# Added by `baton hooks install`: refuses a commit touching files another agent holds
# exclusively (the committing agent is $BATON_AGENT). `git commit --no-verify` skips it.
hooks="$(dirname "$0")"
if [ -x "$hooks/pre-commit.before-baton" ]; then
    "$hooks/pre-commit.before-baton" "$@" || exit $?
fi
baton="${BATON_BIN:-}"
if [ -z "$baton" ]; then
    if [ -x @BATON@ ]; then
        baton=@BATON@
    elif command -v baton >/dev/null 2>&1; then
        baton=baton
    else
        echo "baton: the pre-commit hook cannot find baton (it was "@BATON@" when the hook was installed, and there is none on PATH): run \`baton hooks install\` again with the baton you use, set BATON_BIN to it, or commit with \`git commit --no-verify\`" >&2
        exit 1
    fi
fi
git diff --cached --name-only --diff-filter=ACMRD | "$baton" check-paths --stdin ${BATON_AGENT:+--agent "$BATON_AGENT"}
status=$?
if [ "$status" -eq 7 ]; then
    echo "baton: commit refused: another agent holds these files (see above); wait for them, or \`git commit --no-verify\`" >&2
fi
exit $status
"#;

/// A marker every hook Baton writes carries.
const MARKER: &str = "Added by `baton hooks install`";

/// The hook for the `baton` at `baton`, its path quoted for the shell.
fn hook_text(baton: &Path) -> String {
    let quoted = format!("'{}'", baton.display().to_string().replace('\'', "'\\''"));
    HOOK.replace("@BATON@", &quoted)
}

/// `baton hooks install`: writes `.git/hooks/pre-commit` in the project's repository.
pub fn install_hook(project: &OpenProject, json: bool) -> Result<u8, Error> {
    let dir = project.local().project_dir();
    let hooks = git_hooks_dir(dir)?;
    std::fs::create_dir_all(&hooks).map_err(|e| baton_core::StoreError::io(&hooks, e))?;
    let hook = hooks.join("pre-commit");
    let mut kept = None;
    if let Ok(existing) = std::fs::read_to_string(&hook)
        && !existing.contains(MARKER)
    {
        let before = hooks.join("pre-commit.before-baton");
        if before.exists() {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "{} and {} both exist; merge them by hand, then run this again",
                    hook.display(),
                    before.display()
                ),
            ));
        }
        std::fs::rename(&hook, &before).map_err(|e| baton_core::StoreError::io(&hook, e))?;
        kept = Some(before);
    }
    let baton = std::env::current_exe()
        .map_err(|e| Error::new(ErrorKind::Io, format!("cannot tell where baton is: {e}")))?;
    baton_fs::write_atomic(&hook, hook_text(&baton).as_bytes())?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| baton_core::StoreError::io(&hook, e))?;
    let out = serde_json::json!({
        "hook": hook,
        "kept": kept,
    });
    emit(json, &out, || match &kept {
        Some(before) => format!(
            "Installed {}; your earlier hook is kept as {} and runs first",
            hook.display(),
            before.display()
        ),
        None => format!("Installed {}", hook.display()),
    });
    Ok(0)
}

/// The repository's hooks folder (`git rev-parse --git-path hooks`, so worktrees and
/// `core.hooksPath` are honoured).
fn git_hooks_dir(dir: &Path) -> Result<PathBuf, Error> {
    let out = std::process::Command::new("git")
        .args(["rev-parse", "--git-path", "hooks"])
        .current_dir(dir)
        .output()
        .map_err(|e| Error::new(ErrorKind::Spawn, format!("cannot run git: {e}")))?;
    if !out.status.success() {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "{} is not in a git repository: {}",
                dir.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        ));
    }
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    Ok(if path.is_absolute() {
        path
    } else {
        dir.join(path)
    })
}
