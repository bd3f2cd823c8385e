//! A throwaway PostgreSQL server for a test run: Debian's `postgresql`, a fresh cluster in a
//! temporary folder, listening on a free loopback port only (no Unix socket outside that
//! folder), password authentication (`scram-sha-256`) for every connection, stopped and
//! removed when dropped. PostgreSQL refuses to run as root, so under root the server runs as
//! the unprivileged user `BATON_TEST_PG_USER` (default `baton-test`, which `scripts/test.sh`
//! creates). `BATON_TEST_PG_URL` points the tests at an existing server instead.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The server's owner role (password authentication, like every other role).
const SUPERUSER: &str = "postgres";

pub struct PgServer {
    /// `postgres://baton:PASSWORD@127.0.0.1:PORT/baton`: an ordinary role owning the database.
    url: String,
    port: Option<u16>,
    /// The superuser's URL, for tests that must act on the server itself.
    admin_url: String,
    /// Our own server (`None` when `BATON_TEST_PG_URL` named one).
    own: Option<OwnServer>,
}

struct OwnServer {
    bin: PathBuf,
    data: PathBuf,
    run_as: Option<String>,
    _dir: tempfile::TempDir,
}

impl PgServer {
    /// A server shared by the tests of one binary that run at the same time: started by the
    /// first, stopped when the last lets go of it. (A `static` would never be dropped, and the
    /// server would outlive the run.)
    pub fn shared() -> std::sync::Arc<PgServer> {
        static SHARED: std::sync::Mutex<std::sync::Weak<PgServer>> =
            std::sync::Mutex::new(std::sync::Weak::new());
        let mut shared = SHARED.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(server) = shared.upgrade() {
            return server;
        }
        let server = std::sync::Arc::new(PgServer::start());
        *shared = std::sync::Arc::downgrade(&server);
        server
    }

    /// Starts a server (or takes `BATON_TEST_PG_URL`'s); panics with what to do when
    /// PostgreSQL is missing.
    pub fn start() -> PgServer {
        PgServer::start_with(false)
    }

    /// Starts a server that also speaks TLS, with a certificate for `localhost` and
    /// `127.0.0.1` signed by a CA of its own ([`PgServer::ca_certificate`]).
    pub fn start_tls() -> PgServer {
        PgServer::start_with(true)
    }

    /// The CA that signed a TLS server's certificate.
    pub fn ca_certificate(&self) -> Option<PathBuf> {
        let own = self.own.as_ref()?;
        let ca = own.data.parent()?.join("ca.crt");
        ca.is_file().then_some(ca)
    }

    /// A server of the tests' own allowing `max` connections (PostgreSQL's default is 100),
    /// for a benchmark whose comparison needs more than that.
    pub fn start_allowing(max: u32) -> PgServer {
        PgServer::start_with_options(false, &format!(" -c max_connections={max}"))
    }

    /// [`PgServer::start_allowing`], also counting what each statement costs the server
    /// (`pg_stat_statements`), for a benchmark to say where the server's time went
    /// ([`PgServer::statement_profile`]).
    pub fn start_allowing_profiled(max: u32) -> PgServer {
        let server = PgServer::start_with_options(
            false,
            &format!(
                " -c max_connections={max} -c shared_preload_libraries=pg_stat_statements \
                 -c pg_stat_statements.track=all -c pg_stat_statements.track_planning=on"
            ),
        );
        psql(
            &server.admin_url,
            "CREATE EXTENSION IF NOT EXISTS pg_stat_statements",
        );
        server
    }

    /// The `top` statements by the server's total time in them, one line each (calls, total
    /// and mean milliseconds planning and running, of them planning, the longest run, rows,
    /// the statement's start), for a server
    /// started with [`PgServer::start_allowing_profiled`].
    pub fn statement_profile(&self, top: usize) -> String {
        psql(
            &self.admin_url,
            &format!(
                "SELECT format('%8s calls %9s ms total %7s ms mean (plan %6s) %8s ms max %8s rows  %s', \
                   calls, round(total_exec_time::numeric + total_plan_time::numeric), \
                   round((total_exec_time + total_plan_time)::numeric / calls, 3), \
                   round(total_plan_time::numeric / calls, 3), \
                   round(max_exec_time::numeric, 1), rows, \
                   left(regexp_replace(query, '\\s+', ' ', 'g'), 110)) \
                 FROM pg_stat_statements ORDER BY total_exec_time + total_plan_time DESC \
                 LIMIT {top}"
            ),
        )
    }

    fn start_with(tls: bool) -> PgServer {
        PgServer::start_with_options(tls, "")
    }

    fn start_with_options(tls: bool, extra: &str) -> PgServer {
        if let Ok(url) = std::env::var("BATON_TEST_PG_URL") {
            return PgServer {
                admin_url: url.clone(),
                url,
                port: None,
                own: None,
            };
        }
        let bin = bin_dir();
        let run_as = run_as();
        let dir = tempfile::Builder::new()
            .prefix("baton-pg-")
            .tempdir()
            .unwrap();
        let data = dir.path().join("data");
        let superuser_password = secret();
        let password_file = dir.path().join("pw");
        std::fs::write(&password_file, &superuser_password).unwrap();
        if let Some(user) = &run_as {
            hand_over(user, dir.path());
        }
        let own = OwnServer {
            bin,
            data,
            run_as,
            _dir: dir,
        };
        own.run(
            "initdb",
            &[
                "-D",
                &own.data.display().to_string(),
                "--username",
                SUPERUSER,
                "--pwfile",
                &password_file.display().to_string(),
                "--auth",
                "scram-sha-256",
                "--encoding",
                "UTF8",
                "--no-instructions",
            ],
        );
        let _ = std::fs::remove_file(&password_file);
        let port = crate::free_port();
        let folder = own.data.parent().unwrap().to_path_buf();
        let socket_dir = folder.display().to_string();
        let mut options = format!(
            "-c listen_addresses=127.0.0.1 -p {port} -c unix_socket_directories={socket_dir} -c fsync=on"
        );
        options.push_str(extra);
        if tls {
            certificates(&folder, own.run_as.as_deref());
            options.push_str(&format!(
                " -c ssl=on -c ssl_cert_file={0}/server.crt -c ssl_key_file={0}/server.key",
                folder.display()
            ));
        }
        let log = own.data.parent().unwrap().join("server.log");
        own.run(
            "pg_ctl",
            &[
                "-D",
                &own.data.display().to_string(),
                "-o",
                &options,
                "-l",
                &log.display().to_string(),
                "-w",
                "start",
            ],
        );
        let admin_url =
            format!("postgres://{SUPERUSER}:{superuser_password}@127.0.0.1:{port}/postgres");
        let password = secret();
        psql(
            &admin_url,
            &format!("CREATE ROLE baton LOGIN PASSWORD '{password}'"),
        );
        psql(&admin_url, "CREATE DATABASE baton OWNER baton");
        PgServer {
            url: format!("postgres://baton:{password}@127.0.0.1:{port}/baton"),
            port: Some(port),
            admin_url,
            own: Some(own),
        }
    }

    /// The test role's URL (password included: tests pass it as the user would at run time).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The test role's password (from the URL), for `PGPASSWORD`.
    pub fn password(&self) -> String {
        let rest = self.url.split_once("://").map_or("", |(_, r)| r);
        let userinfo = rest.rsplit_once('@').map_or("", |(u, _)| u);
        userinfo.split_once(':').map_or("", |(_, p)| p).to_string()
    }

    /// The URL without its password, as a user writes it down (the password then comes from
    /// `PGPASSWORD` or `~/.pgpass`).
    pub fn url_without_password(&self) -> String {
        match self.url.split_once("://") {
            Some((scheme, rest)) => match rest.rsplit_once('@') {
                Some((userinfo, host)) => {
                    let user = userinfo.split(':').next().unwrap_or_default();
                    format!("{scheme}://{user}@{host}")
                }
                None => self.url.clone(),
            },
            None => self.url.clone(),
        }
    }

    /// The loopback port of the tests' own server.
    pub fn port(&self) -> Option<u16> {
        self.port
    }

    pub fn admin_url(&self) -> &str {
        &self.admin_url
    }

    /// Runs `sql` as the superuser; returns psql's unaligned output.
    pub fn admin_sql(&self, sql: &str) -> String {
        psql(&self.admin_url, sql)
    }

    /// Restarts the server (fast shutdown: open connections are cut), for fault tests.
    pub fn restart(&self) {
        let own = self
            .own
            .as_ref()
            .expect("restart needs the tests' own server");
        // The log as at the start: without it the new server would keep pg_ctl's output
        // pipe open, and reading that pipe would never end.
        let log = own.data.parent().unwrap().join("server.log");
        own.run(
            "pg_ctl",
            &[
                "-D",
                &own.data.display().to_string(),
                "-l",
                &log.display().to_string(),
                "-m",
                "fast",
                "-w",
                "restart",
            ],
        );
    }
}

/// The server stops with its folder, however the test ends (a failed start included).
impl Drop for OwnServer {
    fn drop(&mut self) {
        if self.data.join("postmaster.pid").exists() {
            let data = self.data.display().to_string();
            let _ = self.try_run("pg_ctl", &["-D", &data, "-m", "fast", "-w", "stop"]);
        }
    }
}

impl OwnServer {
    /// Runs one of the server's programs (as the unprivileged user under root).
    fn try_run(&self, program: &str, args: &[&str]) -> Output {
        let program = self.bin.join(program);
        command_as(self.run_as.as_deref(), &program)
            .args(args)
            .current_dir("/")
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()))
    }

    fn run(&self, program: &str, args: &[&str]) {
        let out = self.try_run(program, args);
        assert!(
            out.status.success(),
            "{program} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Runs the `openssl` command in `folder`; panics with its message when it fails.
fn openssl(folder: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(folder)
        .output()
        .expect("openssl is missing");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A self-signed CA named `name` in `folder` (`NAME.key`, `NAME.crt`); returns the
/// certificate's path.
pub fn certificate_authority(folder: &Path, name: &str, common_name: &str) -> PathBuf {
    let (key, crt) = (format!("{name}.key"), format!("{name}.crt"));
    let subject = format!("/CN={common_name}");
    openssl(
        folder,
        &[
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", &key, "-out", &crt,
            "-days", "2", "-subj", &subject,
        ],
    );
    folder.join(crt)
}

/// A CA and a server certificate it signed for `localhost` and 127.0.0.1, in `folder`:
/// (the CA's certificate, the server's certificate, its key), for a TLS server of a test's.
pub fn localhost_certificates(folder: &Path) -> (PathBuf, PathBuf, PathBuf) {
    certificates(folder, None);
    (
        folder.join("ca.crt"),
        folder.join("server.crt"),
        folder.join("server.key"),
    )
}

/// A CA and a server certificate it signed (for `localhost` and 127.0.0.1), made with the
/// `openssl` command in `folder`; the server's key readable by the server's user only.
fn certificates(folder: &Path, run_as: Option<&str>) {
    let openssl = |args: &[&str]| openssl(folder, args);
    certificate_authority(folder, "ca", "Baton test CA");
    openssl(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=localhost",
    ]);
    std::fs::write(
        folder.join("san.ext"),
        "subjectAltName=DNS:localhost,IP:127.0.0.1\n",
    )
    .unwrap();
    openssl(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.crt",
        "-days",
        "2",
        "-extfile",
        "san.ext",
    ]);
    let key = folder.join("server.key");
    if let Some(user) = run_as {
        for file in ["server.key", "server.crt"] {
            hand_over(user, &folder.join(file));
        }
    }
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
}

/// Runs `sql` through `psql` at `url`; panics with psql's message when it fails.
pub fn psql(url: &str, sql: &str) -> String {
    let out = Command::new("psql")
        .args([
            url,
            "-X",
            "-q",
            "-A",
            "-t",
            "-v",
            "ON_ERROR_STOP=1",
            "-c",
            sql,
        ])
        .stdin(Stdio::null())
        .output()
        .expect("psql is missing: run ./scripts/test.sh, which installs postgresql");
    assert!(
        out.status.success(),
        "psql failed on {sql:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Debian's newest installed server programs (`/usr/lib/postgresql/N/bin`).
fn bin_dir() -> PathBuf {
    let root = Path::new("/usr/lib/postgresql");
    let newest = std::fs::read_dir(root)
        .ok()
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .max()
        .expect("PostgreSQL is missing: run ./scripts/test.sh, which installs postgresql");
    root.join(newest.to_string()).join("bin")
}

/// `program`, run as `user` (the unprivileged one, under root) when there is one.
pub(crate) fn command_as(user: Option<&str>, program: &Path) -> Command {
    match user {
        Some(user) => {
            let mut command = Command::new("runuser");
            command.args(["-u", user, "--"]).arg(program);
            command
        }
        None => Command::new(program),
    }
}

/// Gives `path` (a file, or a folder with everything in it) to `user`, who runs the server.
pub(crate) fn hand_over(user: &str, path: &Path) {
    let status = Command::new("chown")
        .args(["-R", user])
        .arg(path)
        .status()
        .unwrap();
    assert!(
        status.success(),
        "chown {} to {user} failed",
        path.display()
    );
}

/// The user the server runs as: nobody special unless we are root.
pub(crate) fn run_as() -> Option<String> {
    let uid = Command::new("id").arg("-u").output().ok()?;
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        return None;
    }
    let user = std::env::var("BATON_TEST_PG_USER").unwrap_or_else(|_| "baton-test".into());
    let known = Command::new("id")
        .arg(&user)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        known,
        "PostgreSQL refuses to run as root and the user {user} does not exist: run ./scripts/test.sh, which creates it"
    );
    Some(user)
}

/// A random password (hex), from the kernel's generator.
pub(crate) fn secret() -> String {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut random| random.read_exact(&mut bytes))
        .expect("/dev/urandom");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Adds `n` available tasks to project `name` (which must exist) in one statement, rows as
/// `add_task` writes them (adding them one by one would time the adds, not what a benchmark
/// measures). Ids `task-1` … `task-N`, priorities 1 to 5, each a microsecond younger.
pub fn insert_tasks(url: &str, name: &str, n: usize) {
    let sql = format!(
        "INSERT INTO baton_tasks (project, id, position, status, priority, created_at, keys, reach, body)
         SELECT '{name}', 'task-' || g, g, 'available', 1 + g % 5, now() + g * interval '1 microsecond',
                ARRAY['src/part_' || g || '.rs'], ARRAY['', 'src', 'src/part_' || g || '.rs'],
                jsonb_build_object(
                    'id', 'task-' || g,
                    'description', 'Implement part ' || g || ' of the feature, with tests and docs',
                    'status', 'available',
                    'priority', 1 + g % 5,
                    'claimed_by', null,
                    'dependencies', '[]'::jsonb,
                    'context', jsonb_build_object('files', jsonb_build_array('src/part_' || g || '.rs'), 'hints', ''),
                    'created_at', to_char((now() + g * interval '1 microsecond') AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'),
                    'attempts', 0)
         FROM generate_series(1, {n}) AS g;
         UPDATE baton_projects SET next_number = {n} + 1, next_position = {n} + 1 WHERE name = '{name}';
         ANALYZE baton_tasks;"
    );
    psql(url, &sql);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_throwaway_server_takes_password_logins_on_loopback_and_is_gone_when_dropped() {
        let server = PgServer::start();
        assert_eq!(psql(server.url(), "SELECT current_user"), "baton");
        let wrong = server.url().replacen("baton:", "baton:wrong", 1);
        let refused = Command::new("psql")
            .args([wrong.as_str(), "-X", "-c", "SELECT 1"])
            .output()
            .unwrap();
        assert!(!refused.status.success(), "a wrong password is refused");
        let port = server.port().expect("its own server");
        drop(server);
        assert!(
            std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
            "the server stopped"
        );
    }
}
