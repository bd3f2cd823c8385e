//! A throwaway PgBouncer (Debian's `pgbouncer`) in front of a test server, as a deployment
//! with many agents puts one: transaction pooling, listening on a free loopback port only,
//! SCRAM for clients and for the server, `pool` server connections (opened at once and used in
//! turn, so a client's next transaction runs on another server session than its last: what
//! a busy pooler does, made the rule so a test of it cannot pass by luck). Run as the
//! server's unprivileged user under root (PgBouncer refuses root too); stopped and removed
//! when dropped.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::pg::PgServer;

pub struct PgBouncer {
    port: u16,
    server_port: u16,
    password: String,
    pidfile: PathBuf,
    _dir: tempfile::TempDir,
}

impl PgBouncer {
    /// Starts a pooler for `server`'s test database with at most `pool` server connections.
    pub fn start(server: &PgServer, pool: u32) -> PgBouncer {
        let server_port = server
            .port()
            .expect("PgBouncer is put in front of the tests' own server");
        let program = "/usr/sbin/pgbouncer";
        assert!(
            std::path::Path::new(program).exists(),
            "{program} is missing: run ./scripts/test.sh, which installs pgbouncer"
        );
        let dir = tempfile::Builder::new()
            .prefix("baton-pgbouncer-")
            .tempdir()
            .unwrap();
        let port = crate::free_port();
        let password = server.password();
        // The role's SCRAM verifier, as `auth_query` would read it (what a deployment puts
        // here): the pooler checks a client's proof against it and logs in to the server with
        // the keys the proof gives, with no PBKDF2 of its own per client.
        let verifier = server
            .admin_sql("SELECT rolpassword FROM pg_authid WHERE rolname = 'baton'")
            .trim()
            .to_string();
        assert!(verifier.starts_with("SCRAM-SHA-256$"), "{verifier}");
        let users = dir.path().join("users.txt");
        std::fs::write(&users, format!("\"baton\" \"{verifier}\"\n")).unwrap();
        let pidfile = dir.path().join("pgbouncer.pid");
        let config = dir.path().join("pgbouncer.ini");
        std::fs::write(
            &config,
            format!(
                "[databases]\n\
                 baton = host=127.0.0.1 port={server_port} dbname=baton\n\
                 [pgbouncer]\n\
                 listen_addr = 127.0.0.1\n\
                 listen_port = {port}\n\
                 unix_socket_dir =\n\
                 auth_type = scram-sha-256\n\
                 auth_file = {users}\n\
                 pool_mode = transaction\n\
                 default_pool_size = {pool}\n\
                 min_pool_size = {pool}\n\
                 server_round_robin = 1\n\
                 max_client_conn = 2000\n\
                 admin_users = baton\n\
                 logfile = {log}\n\
                 pidfile = {pid}\n",
                users = users.display(),
                log = dir.path().join("pgbouncer.log").display(),
                pid = pidfile.display(),
            ),
        )
        .unwrap();
        let run_as = crate::pg::run_as();
        if let Some(user) = &run_as {
            crate::pg::hand_over(user, dir.path());
        }
        let out = crate::pg::command_as(run_as.as_deref(), std::path::Path::new(program))
            .arg("-d")
            .arg(&config)
            .current_dir("/")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        crate::expect_code("pgbouncer failed to start", out, 0);
        let bouncer = PgBouncer {
            port,
            server_port,
            password,
            pidfile,
            _dir: dir,
        };
        crate::eventually("PgBouncer to accept connections", || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        bouncer
    }

    /// The test role's URL through the pooler, with what Baton needs to know of it: it pools
    /// by transaction, and the server's own port for `LISTEN`.
    pub fn url(&self) -> String {
        format!(
            "postgres://baton:{}@127.0.0.1:{}/baton?pgbouncer=true&listen_port={}",
            self.password, self.port, self.server_port
        )
    }

    /// [`PgBouncer::url`] without the password, as a user writes it down (the password then
    /// comes from `PGPASSWORD` or `~/.pgpass`).
    pub fn url_without_password(&self) -> String {
        format!(
            "postgres://baton@127.0.0.1:{}/baton?pgbouncer=true&listen_port={}",
            self.port, self.server_port
        )
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Waits until the pooler holds all `pool` server connections it was started with (it
    /// opens them once a client has logged in, within a second or so).
    pub fn wait_for_full_pool(&self, pool: u32) {
        crate::eventually("PgBouncer to open its pool's server connections", || {
            self.server_connections() >= pool
        });
    }

    /// The server connections the pooler holds now (its admin console's `SHOW POOLS`: active,
    /// idle, used, tested and logging in, for the test database).
    pub fn server_connections(&self) -> u32 {
        self.show(
            "POOLS",
            &["sv_active", "sv_idle", "sv_used", "sv_tested", "sv_login"],
        )
        .into_iter()
        .map(|n| n as u32)
        .sum()
    }

    /// What the pooler counted for the test database since it started (`SHOW STATS`).
    pub fn stats(&self) -> PoolerStats {
        let [transactions, in_transactions_us, waited_us] = self
            .show(
                "STATS",
                &["total_xact_count", "total_xact_time", "total_wait_time"],
            )
            .try_into()
            .expect("SHOW STATS has a transaction count and time and a wait time");
        PoolerStats {
            transactions,
            in_transactions: std::time::Duration::from_micros(in_transactions_us),
            waited: std::time::Duration::from_micros(waited_us),
        }
    }

    /// The pooler's admin console (`SHOW POOLS`, `SHOW STATS`; simple queries only).
    pub fn console_url(&self) -> String {
        format!(
            "postgres://baton:{}@127.0.0.1:{}/pgbouncer",
            self.password, self.port
        )
    }

    /// The `columns` of the test database's row of the admin console's `SHOW what`.
    fn show(&self, what: &str, columns: &[&str]) -> Vec<u64> {
        let url = self.console_url();
        // One read: the header names the columns (their set differs between versions), the
        // rows follow.
        let out = Command::new("psql")
            .args([
                &url,
                "-A",
                "-F",
                ",",
                "-P",
                "footer=off",
                "-c",
                &format!("SHOW {what}"),
            ])
            .output()
            .unwrap();
        let (text, _) = crate::expect_code(&format!("SHOW {what}"), out, 0);
        let mut lines = text.lines();
        let names: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
        let row: Vec<&str> = lines
            .map(|line| line.split(',').collect::<Vec<_>>())
            .find(|row| row.first() == Some(&"baton"))
            .unwrap_or_default();
        columns
            .iter()
            .map(|column| {
                names
                    .iter()
                    .position(|n| n == column)
                    .and_then(|i| row.get(i)?.parse::<u64>().ok())
                    .unwrap_or_else(|| panic!("SHOW {what} has no {column} for baton"))
            })
            .collect()
    }
}

/// A pooler's counts for one database: transactions run, the time clients spent in them, and
/// the time clients waited for a server connection.
#[derive(Debug, Clone, Copy)]
pub struct PoolerStats {
    pub transactions: u64,
    pub in_transactions: std::time::Duration,
    pub waited: std::time::Duration,
}

impl PoolerStats {
    /// What was counted between `before` and these.
    pub fn since(&self, before: &PoolerStats) -> PoolerStats {
        PoolerStats {
            transactions: self.transactions - before.transactions,
            in_transactions: self.in_transactions - before.in_transactions,
            waited: self.waited - before.waited,
        }
    }

    /// The time in one transaction, on average.
    pub fn average_in_transaction(&self) -> std::time::Duration {
        self.in_transactions / self.transactions.max(1) as u32
    }

    /// The time a transaction waited for a server connection before it, on average.
    pub fn average_wait(&self) -> std::time::Duration {
        self.waited / self.transactions.max(1) as u32
    }
}

impl Drop for PgBouncer {
    fn drop(&mut self) {
        if let Ok(pid) = std::fs::read_to_string(&self.pidfile) {
            let pid = pid.trim().to_string();
            let _ = Command::new("kill").args(["-INT", &pid]).status();
            crate::eventually("PgBouncer to stop", || {
                !std::path::Path::new(&format!("/proc/{pid}")).exists()
            });
        }
    }
}
