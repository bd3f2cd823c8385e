//! An attempt's sandbox put together from its crew, its profile and its task: the task's own
//! state folder for the agent CLI, what committing on its branch needs, its network's allow-list,
//! its door to Baton and its pids cgroup, made into one [`Boundary`] around its launch.

use std::path::{Path, PathBuf};

use baton_sandbox::net::AllowList;
use baton_sandbox::{Binds, Boundary, NetworkAccess, user_home};

use baton_sandbox::CgroupEntry;
use baton_sandbox::pids_cgroup::{PidsCgroup, ThreadCgroup};

use crate::agent_home::StateMount;
use crate::error::{Result, TeamError};
use crate::process::{Launch, ProcessEvent, ProcessEvents};
use crate::profile::Network;
use crate::supervision::crew::Crew;

/// An attempt's launch as it runs: inside its sandbox with its door open (and its pids
/// cgroup, where one can be made), or as it was.
pub(crate) struct SandboxedLaunch {
    pub launch: Launch,
    pub door: Option<AttemptDoor>,
    pub cgroup: Option<PidsCgroup>,
}

/// An attempt's open door, and the channel on which what it refuses reaches the attempt's
/// transcript.
pub(crate) struct AttemptDoor {
    door: baton_door::Door,
    refusals: Option<ProcessEvents>,
}

impl AttemptDoor {
    /// What the door refuses from now on, said with the agent's own output; once.
    pub fn refusals(&mut self) -> Option<ProcessEvents> {
        self.refusals.take()
    }

    /// Closes the door: no more knocks, and every command still running for the agent ends.
    pub fn close(self) {
        self.door.close();
    }
}

/// Who an attempt's agent is at its task, and where it works.
pub(crate) struct Seat<'a> {
    pub agent: &'a str,
    pub task: &'a str,
    /// The task's worktree, when it has one (a worker's).
    pub worktree: Option<&'a baton_git::Worktree>,
    /// A team's judge: its door lets it only read.
    pub judging: bool,
    /// A checkout to show read-only where it is (the trial merge's, which a judge reads), over
    /// the hidden `.coordination/` it lives in.
    pub shown: Option<&'a Path>,
}

impl Seat<'_> {
    /// The name the seat's own folders go by (its agent's state, its door): the task's for
    /// its worker, `_judge/TASK` for its judge (`_` starts no task's name).
    pub(crate) fn folder(&self) -> Result<PathBuf> {
        baton_core::names::validate_task_id(self.task)?;
        Ok(match self.judging {
            true => Path::new("_judge").join(self.task),
            false => PathBuf::from(self.task),
        })
    }
}

/// `launch` for `seat`'s agent and task, worked by `crew`: inside the profile's sandbox, with a
/// door of its own, when the profile has one on; as it is otherwise.
pub(crate) fn sandboxed(
    crew: &Crew<'_>,
    seat: &Seat<'_>,
    mut launch: Launch,
) -> Result<SandboxedLaunch> {
    let (task, worktree) = (seat.task, seat.worktree);
    let settings = &crew.profile.sandbox;
    if !settings.enabled {
        return Ok(SandboxedLaunch {
            launch,
            door: None,
            cgroup: None,
        });
    }
    let home = user_home();
    let states = crate::agent_home::AgentHome::at(crew.local, &seat.folder()?)
        .prepare(crew.profile.kind.state_folders(), home.as_deref())
        .map_err(|e| io_error(format!("cannot make the agent's own state folder: {e}")))?;
    let git = match (worktree, &crew.worktrees) {
        (Some(worktree), Some(worktrees)) => {
            Some((worktree.path.clone(), worktrees.sandbox_access(task)?))
        }
        _ => None,
    };
    let allow = match settings.network {
        Network::AllowList => Some(allow_list(crew, &launch, &states)?),
        Network::Off | Network::Open => None,
    };
    let network = network_access(settings.network, allow.as_ref());
    let (door, refusals) = open_door(crew, seat, &launch, allow)?;
    let (cgroup, entry) = pids_cgroup(settings.max_processes);
    // The CLI's state folders where it looks for them, and the variables that tell it.
    launch.env.extend(states.iter().filter_map(|state| {
        let variable = state.variable?;
        Some((variable.into(), state.inside.display().to_string()))
    }));
    let (worktree, mut binds) = match git {
        Some((worktree, git)) => (Some(worktree), binds(git)),
        None => (None, Binds::default()),
    };
    if let Some(checkout) = seat.shown {
        binds
            .shown
            .push((checkout.to_path_buf(), checkout.to_path_buf()));
    }
    let boundary = Boundary {
        project_dir: crew.local.project_dir().to_path_buf(),
        project_writable: worktree.is_none() && !crew.reads_only,
        hidden: Some(crew.local.root().to_path_buf()),
        worktree,
        binds,
        pass_prefixes: crew.profile.kind.variable_prefixes().to_vec(),
        own: states
            .iter()
            .map(|s| (s.folder.clone(), s.inside.clone()))
            .collect(),
        read: expand_all(&settings.read, home.as_deref()),
        write: expand_all(&settings.write, home.as_deref()),
        home,
        network,
        pass: settings.env.clone(),
        shown: Some((door.dir().to_path_buf(), PathBuf::from(baton_door::INSIDE))),
        // Where the sandbox has a loopback of its own, the door is reached there.
        bridge: baton_door::bridged(settings.network).then(|| {
            (
                Path::new(baton_door::INSIDE).join(baton_door::SOCKET),
                baton_door::INSIDE_PORT,
            )
        }),
        // Chromium makes a Unix socket for its profile's lock, and stops when it cannot.
        unix_sockets: settings.unix_sockets || crew.profile.browser,
        starter: crew.setting.baton.clone(),
        max_processes: settings.max_processes,
        tmp_bytes: settings.tmp_bytes(),
        max_open_files: settings.max_open_files,
        cgroup: entry,
        notes: vec!["Baton is reached through the attempt's door as this agent".into()],
    };
    Ok(SandboxedLaunch {
        launch: wrapped(&boundary, launch),
        door: Some(AttemptDoor {
            door,
            refusals: Some(refusals),
        }),
        cgroup,
    })
}

/// The attempt's pids cgroup: none of its own when it is born in its worker thread's (and
/// says so), else one made for it to join, where one can be made.
fn pids_cgroup(max_processes: u32) -> (Option<PidsCgroup>, Option<CgroupEntry>) {
    if ThreadCgroup::current() {
        return (None, Some(CgroupEntry::Born));
    }
    let cgroup = PidsCgroup::create(max_processes);
    let entry = cgroup.as_ref().map(|c| CgroupEntry::Join(c.procs()));
    (cgroup, entry)
}

/// The hosts an allow-listed attempt may reach: its CLI's model hosts, the addresses its
/// variables and the user's own configuration name (not an agent's copy of it), and the
/// profile's `allow`.
fn allow_list(crew: &Crew<'_>, launch: &Launch, states: &[StateMount]) -> Result<AllowList> {
    let mut env: Vec<(String, String)> = std::env::vars().collect();
    env.extend(launch.env.iter().cloned());
    let kind = crew.profile.kind;
    let configured: Vec<String> = states
        .iter()
        .filter_map(|s| s.user.as_ref())
        .flat_map(|user| kind.configured_model_urls(user))
        .collect();
    baton_sandbox::net::allow_list::defaults(
        kind.model_hosts(),
        kind.base_url_variables(),
        &env,
        &configured,
        &crew.profile.sandbox.allow,
    )
    .map_err(|e| TeamError::profile(&crate::profile::profiles_file(crew.local), e))
}

/// The attempt's door, open for `agent` at `task` (its commands run in the launch's folder,
/// reaching the crew's store; its proxy allowing `allow`), and the channel on which it tells
/// what it refuses.
fn open_door(
    crew: &Crew<'_>,
    seat: &Seat<'_>,
    launch: &Launch,
    allow: Option<AllowList>,
) -> Result<(baton_door::Door, ProcessEvents)> {
    let mut store_env = vec![(
        "BATON_DIR".to_string(),
        crew.local.project_dir().display().to_string(),
    )];
    store_env.extend(crew.setting.store_env.iter().cloned());
    let refusals: ProcessEvents = std::sync::mpsc::channel();
    let tell = refusals.0.clone();
    let door = baton_door::Door::open(
        &crew.local.team_dir().join("doors").join(seat.folder()?),
        baton_door::Guest {
            agent: seat.agent.to_string(),
            task: seat.task.to_string(),
            baton: crew.setting.baton.clone(),
            store_env,
            workdir: launch.workdir.clone(),
            reads_only: seat.judging,
        },
        allow,
        crew.profile.sandbox.ask,
        std::sync::Arc::new(move |note| {
            let _ = tell.send(ProcessEvent::Note(note));
        }),
    )
    .map_err(|e| io_error(format!("cannot open the attempt's door to Baton: {e}")))?;
    Ok((door, refusals))
}

fn io_error(message: String) -> TeamError {
    TeamError::new(baton_core::ErrorKind::Io, message)
}

/// The variables that reach a store; a sandboxed program is given none of them (an agent goes
/// through its door).
const STORE_VARIABLES: [&str; 3] = ["BATON_STORE", "BATON_PROJECT", "BATON_LEASE"];

/// `launch` run inside `boundary`: bubblewrap's command in its place, saying what it runs.
pub(crate) fn wrapped(boundary: &Boundary, launch: Launch) -> Launch {
    let wrapped = boundary.wrap(baton_sandbox::Command {
        program: launch.program,
        args: launch.args,
        workdir: launch.workdir.clone(),
        env: launch
            .env
            .into_iter()
            .filter(|(key, _)| !STORE_VARIABLES.contains(&key.as_str()))
            .collect(),
    });
    Launch {
        program: wrapped.program,
        args: wrapped.args,
        env: wrapped.env,
        cgroup: wrapped.cgroup,
        sandbox: Some(crate::process::Sandboxed {
            summary: wrapped.summary,
            shown: wrapped.shown,
        }),
        ..launch
    }
}

/// What `network` gives a sandbox: the proxy in its door's folder reaching `allow` (its list,
/// when the setting is an allow-list), none, or the machine's.
pub(crate) fn network_access(network: Network, allow: Option<&AllowList>) -> NetworkAccess {
    match (network, allow) {
        (Network::Open, _) => NetworkAccess::Machine,
        (Network::AllowList, Some(list)) => NetworkAccess::Proxied {
            socket: Path::new(baton_door::INSIDE).join(baton_sandbox::net::proxy::SOCKET),
            forward: list.loopback_ports(),
            allowed: list.describe(),
        },
        _ => NetworkAccess::Nothing,
    }
}

/// What committing on a task's branch needs of the shared repository, as binds.
pub(crate) fn binds(git: baton_git::GitAccess) -> Binds {
    Binds {
        writable: git.writable,
        private: git.private,
        read_only: git.read_only,
        shown: git.shown,
        scratch: git.scratch,
    }
}

/// Paths a user named for a sandbox (`~/` is the home folder `home`).
pub(crate) fn expand_all(paths: &[String], home: Option<&Path>) -> Vec<PathBuf> {
    paths
        .iter()
        .map(|p| crate::profile::SandboxSettings::expand(p, home))
        .collect()
}
