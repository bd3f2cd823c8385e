//! The project's check (the command `.coordination/review.toml` names, say `cargo test`) run
//! on one commit of a task's branch: in the task's worktree before the lead merges it
//! (`baton-api`'s `review_check` and `task_merge`), or in the merge queue's checkout on the
//! branch merged with the lead's ([`crate::landing::merge_queue`]). It runs to its end or its time
//! limit, and its outcome is a [`CheckRun`] for the task's review record.
//!
//! The check runs what an agent wrote (its tests, its build scripts), so it runs in a sandbox
//! as the agent did ([`crate::sandbox::Boundary`], unless `check_sandbox = false`): it writes
//! the checkout it runs in and `check_write`, reads the system, toolchains and the project,
//! gets none of the lead's secrets (no store URL or password, no `~/.ssh`), and its network is
//! the package registries and `check_allow` through a proxy of its own (`check_network`);
//! what that proxy refused is at the end of the check's output.

use std::time::{Duration, Instant};

use baton_core::review::{CheckRun, MAX_CHECK_OUTPUT, ReviewSettings};
use baton_core::{ErrorKind, Timestamp};

use crate::error::{Result, TeamError};
use crate::exec::{RunningCommand, TaskEnv};
use crate::process::Launch;
use crate::profile::SandboxSettings;
use baton_sandbox::{Binds, Boundary};

/// Runs `command` (the project's check, under `settings`' time limit) for the task and
/// worktree `env` gives, on commit `head`.
pub fn run_check_command(
    command: &str,
    settings: &ReviewSettings,
    env: &TaskEnv<'_>,
    head: &str,
) -> Result<CheckRun> {
    let started_at = Timestamp::now();
    let clock = Instant::now();
    let (running, sandbox) =
        start_on_checkout(command, settings, env, Writes::Checkout, env.stdin_json())?;
    let limit = Duration::from_secs_f64(settings.check_timeout_minutes * 60.0);
    let (status, timed_out) = match running.wait_timeout(limit) {
        Some(status) => (status, false),
        None => (
            running
                .stop(Duration::from_secs(5))
                .unwrap_or_else(|| Err(std::io::Error::other("it could not be stopped"))),
            true,
        ),
    };
    let status = status.map_err(|e| {
        TeamError::new(
            ErrorKind::Io,
            format!("the check `{command}` could not be waited for: {e}"),
        )
    })?;
    let finished = running.finish();
    let mut output = format!("{}{}", finished.stdout, finished.stderr);
    if let Some(sandbox) = &sandbox {
        for refusal in sandbox.refused.lock().expect("check lock").iter() {
            output.push_str(&format!("\n[{refusal}: check_allow in review.toml]"));
        }
    }
    if timed_out {
        output.push_str(&format!(
            "\n[stopped after {} minutes: check_timeout_minutes in review.toml]",
            settings.check_timeout_minutes
        ));
    }
    Ok(CheckRun {
        command: command.to_string(),
        head: head.to_string(),
        passed: status.success() && !timed_out,
        exit_code: status.code(),
        output: baton_core::text::suffix(&output, MAX_CHECK_OUTPUT).to_string(),
        started_at,
        duration_ms: u64::try_from(clock.elapsed().as_millis()).unwrap_or(u64::MAX),
        merged_with: None,
    })
}

/// Where the check's allow-listed network goes: the allow-list, the proxy's folder
/// (`.coordination/team/checks/TASK-PID-N`), and the proxy with that folder held open; what the
/// proxy refuses is added to `refused`.
fn open_proxy(
    settings: &ReviewSettings,
    env: &TaskEnv<'_>,
    layout: &baton_core::Layout,
    refused: &std::sync::Arc<std::sync::Mutex<Vec<String>>>,
) -> Result<(
    baton_sandbox::net::AllowList,
    std::path::PathBuf,
    (baton_sandbox::net::proxy::NetProxy, std::fs::File),
)> {
    let allow = baton_sandbox::net::allow_list::defaults(&[], &[], &[], &[], &settings.check_allow)
        .map_err(|e| TeamError::new(ErrorKind::InvalidInput, e))?;
    let folder = layout.team_dir().join("checks").join(format!(
        "{}-{}-{}",
        env.task.id,
        std::process::id(),
        CHECKS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let io = |e: std::io::Error| {
        TeamError::new(
            ErrorKind::Io,
            format!("cannot open the check's network proxy: {e}"),
        )
    };
    let _ = std::fs::remove_dir_all(&folder);
    std::fs::create_dir_all(&folder).map_err(io)?;
    let handle = std::fs::File::open(&folder).map_err(io)?;
    let said = refused.clone();
    let proxy = baton_sandbox::net::proxy::NetProxy::open(
        &baton_sandbox::socket_address(&folder, &handle, baton_sandbox::net::proxy::SOCKET),
        allow.clone(),
        move |why| said.lock().expect("check lock").push(why),
        None,
    )
    .map_err(io)?;
    Ok((allow, folder, (proxy, handle)))
}

/// Starts `command` on the task's checkout `env` gives, `input` on its stdin, in the sandbox
/// `writes` asks for unless review.toml says `check_sandbox = false`; the sandbox is returned
/// with it, to outlive the run (its network proxy, its refusals).
pub(crate) fn start_on_checkout(
    command: &str,
    settings: &ReviewSettings,
    env: &TaskEnv<'_>,
    writes: Writes,
    input: Vec<u8>,
) -> Result<(RunningCommand, Option<CheckSandbox>)> {
    let sandbox = match settings.check_sandbox {
        true => Some(CheckSandbox::prepare(settings, env, writes)?),
        false => None,
    };
    let contain = sandbox
        .as_ref()
        .map(|sandbox| move |launch| crate::attempt_sandbox::wrapped(&sandbox.boundary, launch));
    let running = RunningCommand::start_fed(
        command,
        env,
        contain.as_ref().map(|c| c as &dyn Fn(Launch) -> Launch),
        input,
    )?;
    Ok((running, sandbox))
}

/// What a command run on a task's checkout may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Writes {
    /// The checkout it runs in, and `check_write` (the project's check: it builds and tests).
    Checkout,
    /// Nothing of the project: the checkout is shown read-only, with no network (a judge
    /// reads the work, it does not change it).
    Nothing,
}

/// The sandbox one check runs in, and the proxy its network goes through.
pub(crate) struct CheckSandbox {
    pub(crate) boundary: Boundary,
    /// The proxy's folder (`.coordination/team/checks/…`), removed with it.
    folder: Option<std::path::PathBuf>,
    /// The proxy, and its folder held open (its socket may be reached through it).
    proxy: Option<(baton_sandbox::net::proxy::NetProxy, std::fs::File)>,
    refused: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    /// The check's pids cgroup, where one can be made; removed after the check.
    _cgroup: Option<baton_sandbox::pids_cgroup::PidsCgroup>,
}

impl CheckSandbox {
    pub(crate) fn prepare(
        settings: &ReviewSettings,
        env: &TaskEnv<'_>,
        writes: Writes,
    ) -> Result<CheckSandbox> {
        use baton_core::network::Network;
        baton_sandbox::check_available().map_err(|e| {
            TeamError::new(
                ErrorKind::Spawn,
                format!(
                    "the check runs in a sandbox, and {e} (or set check_sandbox = false in \
                     .coordination/review.toml to run it as the lead)"
                ),
            )
        })?;
        let home = baton_sandbox::user_home();
        let layout = baton_core::Layout::for_project(env.project_dir);
        let refused = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let network = match writes {
            Writes::Checkout => settings.check_network,
            Writes::Nothing => Network::Off,
        };
        let (allow, folder, proxy) = match network {
            Network::Open | Network::Off => (None, None, None),
            Network::AllowList => {
                let (allow, folder, proxy) = open_proxy(settings, env, &layout, &refused)?;
                (Some(allow), Some(folder), Some(proxy))
            }
        };
        let network = crate::attempt_sandbox::network_access(network, allow.as_ref());
        let cgroup = baton_sandbox::pids_cgroup::PidsCgroup::create(settings.check_max_processes);
        let read = crate::attempt_sandbox::expand_all(&settings.check_read, home.as_deref());
        let write = match writes {
            Writes::Checkout => {
                crate::attempt_sandbox::expand_all(&settings.check_write, home.as_deref())
            }
            Writes::Nothing => Vec::new(),
        };
        let mut binds = Binds::default();
        let (worktree, project_writable) = match (env.worktree, writes) {
            (Some(w), Writes::Checkout) => (Some(w.path.clone()), false),
            (None, Writes::Checkout) => (None, true),
            // Shown where it is, read-only, over the hidden `.coordination/` it lives in.
            (Some(w), Writes::Nothing) => {
                binds.shown.push((w.path.clone(), w.path.clone()));
                (None, false)
            }
            (None, Writes::Nothing) => (None, false),
        };
        Ok(CheckSandbox {
            boundary: Boundary {
                project_dir: env.project_dir.to_path_buf(),
                project_writable,
                hidden: Some(layout.root().to_path_buf()),
                worktree,
                binds,
                pass_prefixes: Vec::new(),
                home,
                own: Vec::new(),
                read,
                write,
                network,
                pass: settings.check_env.clone(),
                shown: folder
                    .clone()
                    .map(|f| (f, std::path::PathBuf::from(baton_door::INSIDE))),
                bridge: None,
                unix_sockets: settings.check_unix_sockets,
                starter: crate::launch::baton_program(),
                max_processes: settings.check_max_processes,
                // A check's /tmp and open files are bounded as an agent's are by default.
                tmp_bytes: SandboxSettings::default().tmp_bytes(),
                max_open_files: SandboxSettings::default().max_open_files,
                cgroup: cgroup
                    .as_ref()
                    .map(|c| baton_sandbox::CgroupEntry::Join(c.procs())),
                notes: Vec::new(),
            },
            _cgroup: cgroup,
            folder,
            proxy,
            refused,
        })
    }
}

impl Drop for CheckSandbox {
    fn drop(&mut self) {
        drop(self.proxy.take());
        if let Some(folder) = &self.folder {
            let _ = std::fs::remove_dir_all(folder);
        }
    }
}

/// Checks run by this process so far: each proxy's folder is its own.
static CHECKS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
