//! An attempt's sandbox put together from its crew, its profile and its task: the task's own
//! state folder for the agent CLI, what committing on its branch needs, its network's allow-list,
//! its door to Baton and its pids cgroup, made into one [`Boundary`] around its launch.

use std::path::PathBuf;

use crate::process::Launch;
use crate::profile::Network;
use crate::sandbox::{Boundary, Reach, expand_all, user_home};

/// An attempt's launch as it runs: inside its sandbox with its door open (and its pids
/// cgroup, where one can be made), or as it was.
pub(crate) struct Contained {
    pub launch: Launch,
    pub door: Option<crate::door::Door>,
    pub cgroup: Option<crate::pids_cgroup::PidsCgroup>,
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
            let list = crate::allow_list::defaults(
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
    let network = Reach::of(settings.network, allow.as_ref());
    let door = crate::door::Door::open(
        &door_dir(crew.local, task)?,
        crate::door::Guest {
            agent: agent.to_string(),
            task: task.to_string(),
            baton: crew.setting.baton.clone(),
            store_env,
            workdir: launch.workdir.clone(),
        },
        allow,
        settings.ask,
    )
    .map_err(|e| {
        crate::error::TeamError::new(
            baton_core::ErrorKind::Io,
            format!("cannot open the attempt's door to Baton: {e}"),
        )
    })?;
    // Born in its worker thread's cgroup, or moved into one of its own.
    let born_limited = crate::pids_cgroup::ThreadCgroup::current();
    let cgroup = match born_limited {
        true => None,
        false => crate::pids_cgroup::PidsCgroup::create(settings.max_processes),
    };
    let boundary = Boundary {
        project_dir: crew.local.project_dir().to_path_buf(),
        project_writable: access.is_none(),
        coordination: crew.local.root().to_path_buf(),
        worktree: access,
        pass_prefixes: crew.profile.kind.variable_prefixes().to_vec(),
        states,
        read: expand_all(&settings.read, home.as_deref()),
        write: expand_all(&settings.write, home.as_deref()),
        home,
        network,
        pass: settings.env.clone(),
        door: Some(door.dir().to_path_buf()),
        bridge_door: crate::door::bridged(settings.network),
        // Chromium makes a Unix socket for its profile's lock, and stops when it cannot.
        unix_sockets: settings.unix_sockets || crew.profile.browser,
        baton: crew.setting.baton.clone(),
        max_processes: settings.max_processes,
        tmp_bytes: settings.tmp_bytes(),
        max_open_files: settings.max_open_files,
        cgroup: match born_limited {
            true => Some(crate::sandbox::CgroupEntry::Born),
            false => cgroup
                .as_ref()
                .map(|c| crate::sandbox::CgroupEntry::Join(c.procs())),
        },
    };
    Ok(Contained {
        launch: boundary.wrap(launch),
        door: Some(door),
        cgroup,
    })
}

/// Where the door of an attempt at `task` is: `.coordination/team/doors/TASK`.
fn door_dir(local: &baton_core::Layout, task: &str) -> crate::error::Result<PathBuf> {
    baton_core::names::validate_task_id(task)?;
    Ok(local.team_dir().join("doors").join(task))
}
