//! No host socket: a database's socket under `/run` (as Debian's PostgreSQL keeps its own) and
//! one in the project folder, which the sandbox shows read-only, are both out of reach of a
//! sandboxed agent, which tries to connect to each by path; it still reaches Baton through its
//! door (over its own loopback) and does its task. Without the filter the second socket
//! answered (`connect` is allowed on a read-only mount); without the hidden `/run`, the first.

use super::support;

use std::os::unix::net::UnixListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use support::{Project, git};

support::on_both_stores!(no_host_socket_is_reachable_from_a_sandbox);

/// A Unix socket listening at `path`, counting whoever connects.
fn listen(path: &std::path::Path) -> Arc<AtomicUsize> {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(path);
    let listener = UnixListener::bind(path).unwrap();
    let seen = Arc::new(AtomicUsize::new(0));
    let counted = seen.clone();
    std::thread::spawn(move || {
        for _ in listener.incoming().flatten() {
            counted.fetch_add(1, Ordering::SeqCst);
        }
    });
    seen
}

fn no_host_socket_is_reachable_from_a_sandbox(p: Project) {
    support::repository(p.path());
    p.ok(&["leader", "add-task", "Probe", "--id", "t1"]);
    let name = p.path().file_name().unwrap().to_string_lossy().to_string();
    // In the project folder, which the sandbox shows read-only (as it shows the system).
    let shown = p.path().join("service/db.sock");
    let mut sockets = vec![(shown.clone(), listen(&shown))];
    // Under /run, where the system's services keep theirs (root may make one there).
    let run = std::path::PathBuf::from(format!("/run/baton-hostile-{name}/db.sock"));
    if std::fs::create_dir_all(run.parent().unwrap()).is_ok() {
        sockets.push((run.clone(), listen(&run)));
    }
    let probe = r#"import socket, sys
for path in sys.argv[1:]:
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
        print("reached", path)
    except OSError as e:
        print("refused", path, e.errno)
"#;
    std::fs::write(p.path().join(".git/probe.py"), probe).unwrap();
    let paths: Vec<String> = sockets
        .iter()
        .map(|(path, _)| format!("'{}'", path.display()))
        .collect();
    let agent = format!(
        "python3 '{}' {} > probe.txt; baton worker list > /dev/null && echo door-ok >> probe.txt; \
         echo \"$BATON_DOOR\" >> probe.txt; git add probe.txt && git commit -qm probe",
        p.path().join(".git/probe.py").display(),
        paths.join(" ")
    );
    let out = p
        .committing(&["team", "up", "--exec", &agent])
        .output()
        .unwrap();
    let (_, stderr) = support::expect_code("team up", out, 0);
    let said = git(p.path(), &["show", "baton/t1:probe.txt"]);
    for (path, seen) in &sockets {
        assert!(
            said.contains(&format!("refused {}", path.display())),
            "{said}\n{stderr}"
        );
        assert_eq!(
            seen.load(Ordering::SeqCst),
            0,
            "{} was reached",
            path.display()
        );
    }
    assert!(
        said.contains("door-ok"),
        "the door is still reached: {said}"
    );
    assert!(
        said.contains("127.0.0.1:"),
        "over the sandbox's loopback: {said}"
    );
    let _ = std::fs::remove_dir_all(run.parent().unwrap());
}
