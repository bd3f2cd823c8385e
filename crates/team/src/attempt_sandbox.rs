//! An attempt's sandbox put together from its crew, its profile and its task: the task's own
//! state folder for the agent CLI, what committing on its branch needs, its network's allow-list,
//! its door to Baton and its pids cgroup, made into one [`Boundary`] around its launch.

use std::path::{Path, PathBuf};

use baton_sandbox::net::AllowList;
use baton_sandbox::{Binds, Boundary, NetworkAccess, user_home};

use crate::process::Launch;
use crate::profile::Network;

/// An attempt's launch as it runs: inside its sandbox with its door open (and its pids
/// cgroup, where one can be made), or as it was.
pub(crate) struct Contained {
    pub launch: Launch,
    pub door: Option<AttemptDoor>,
    pub cgroup: Option<baton_sandbox::pids_cgroup::PidsCgroup>,
}

/// An attempt's open door, and the channel on which what it refuses reaches the attempt's
/// transcript.
pub(crate) struct AttemptDoor {
    door: baton_door::Door,
    asides: Option<crate::process::ProcessEvents>,
}

impl AttemptDoor {
    /// What the door refuses from now on, said with the agent's own output; once.
    pub fn refusals(&mut self) -> Option<crate::process::ProcessEvents> {
        self.asides.take()
    }

    /// Closes the door: no more knocks, and every command still running for the agent ends.
    pub fn close(self) {
        self.door.close();
    }
}

/// `launch` for task `task` worked by `crew` as agent `agent` (in `worktree`, when it has
/// one): inside the profile's sandbox, with a door of its own, when the profile has one on; as
/// it is otherwise.
pub(crate) fn contain(
    crew: &crate::crew::Crew<'_>,
    agent: &str,
    task: &str,
    worktree: Option<&baton_git::Worktree>,
    launch: Launch,
) -> crate::error::Result<Contained> {
    let settings = &crew.profile.sandbox;
    if !settings.enabled {
        return Ok(Contained {
            launch,
            door: None,
            cgroup: None,
        });
    }
    let home = user_home();
    let states = crate::agent_home::AgentHome::of(crew.local, task)?
        .prepare(crew.profile.kind.state_folders(), home.as_deref())
        .map_err(|e| {
            crate::error::TeamError::new(
                baton_core::ErrorKind::Io,
                format!("cannot make the agent's own state folder: {e}"),
            )
        })?;
    let access = match (worktree, &crew.worktrees) {
        (Some(worktree), Some(worktrees)) => {
            Some((worktree.path.clone(), worktrees.sandbox_access(task)?))
        }
        _ => None,
    };
    let mut store_env = vec![(
        "BATON_DIR".to_string(),
        crew.local.project_dir().display().to_string(),
    )];
    store_env.extend(crew.setting.store_env.iter().cloned());
    let allow = match settings.network {
        Network::AllowList => {
            let mut env: Vec<(String, String)> = std::env::vars().collect();
            env.extend(launch.env.iter().cloned());
            // The model addresses as the user configured them, not as an agent left its copy.
            let kind = crew.profile.kind;
            let configured: Vec<String> = states
                .iter()
                .filter_map(|s| s.user.as_ref())
                .flat_map(|user| kind.configured_model_urls(user))
                .collect();
            let list = baton_sandbox::net::allow_list::defaults(
                kind.model_hosts(),
                kind.base_url_variables(),
                &env,
                &configured,
                &settings.allow,
            )
            .map_err(|e| {
                crate::error::TeamError::profile(&crate::profile::profiles_file(crew.local), e)
            })?;
            Some(list)
        }
        Network::Off | Network::Open => None,
    };
    let network = reach(settings.network, allow.as_ref());
    let asides: crate::process::ProcessEvents = std::sync::mpsc::channel();
    let tell = asides.0.clone();
    let door = baton_door::Door::open(
        &door_dir(crew.local, task)?,
        baton_door::Guest {
            agent: agent.to_string(),
            task: task.to_string(),
            baton: crew.setting.baton.clone(),
            store_env,
            workdir: launch.workdir.clone(),
        },
        allow,
        settings.ask,
        std::sync::Arc::new(move |note| {
            let _ = tell.send(crate::process::ProcessEvent::Note(note));
        }),
    )
    .map_err(|e| {
        crate::error::TeamError::new(
            baton_core::ErrorKind::Io,
            format!("cannot open the attempt's door to Baton: {e}"),
        )
    })?;
    // Born in its worker thread's cgroup, or moved into one of its own.
    let born_limited = baton_sandbox::pids_cgroup::ThreadCgroup::current();
    let cgroup = match born_limited {
        true => None,
        false => baton_sandbox::pids_cgroup::PidsCgroup::create(settings.max_processes),
    };
    let (worktree, binds) = match access {
        Some((worktree, git)) => (Some(worktree), binds(git)),
        None => (None, Binds::default()),
    };
    let mut launch = launch;
    // The CLI's state folders where it looks for them, and the variables that tell it.
    for state in &states {
        if let Some(variable) = state.variable {
            launch
                .env
                .push((variable.into(), state.inside.display().to_string()));
        }
    }
    let boundary = Boundary {
        project_dir: crew.local.project_dir().to_path_buf(),
        project_writable: worktree.is_none(),
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
        cgroup: match born_limited {
            true => Some(baton_sandbox::CgroupEntry::Born),
            false => cgroup
                .as_ref()
                .map(|c| baton_sandbox::CgroupEntry::Join(c.procs())),
        },
        notes: vec!["Baton is reached through the attempt's door as this agent".into()],
    };
    Ok(Contained {
        launch: wrapped(&boundary, launch),
        door: Some(AttemptDoor {
            door,
            asides: Some(asides),
        }),
        cgroup,
    })
}

/// Where the door of an attempt at `task` is: `.coordination/team/doors/TASK`.
fn door_dir(local: &baton_core::Layout, task: &str) -> crate::error::Result<PathBuf> {
    baton_core::names::validate_task_id(task)?;
    Ok(local.team_dir().join("doors").join(task))
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
pub(crate) fn reach(network: Network, allow: Option<&AllowList>) -> NetworkAccess {
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
    }
}

/// Paths a user named for a sandbox (`~/` is the home folder `home`).
pub(crate) fn expand_all(paths: &[String], home: Option<&Path>) -> Vec<PathBuf> {
    paths
        .iter()
        .map(|p| crate::profile::SandboxSettings::expand(p, home))
        .collect()
}
