//! What every request must pass before anything else looks at it.
//!
//! - **Host**: one of the names the server is reached by (its address, `localhost` on
//!   loopback, and the names `--host` gives for a tunnel or a reverse proxy). A page on another
//!   site whose name was made to point at this machine (DNS rebinding) sends its own name, and
//!   is refused.
//! - **Origin**: a request from a page must come from this server's own origin; a write (any
//!   `POST`) must say where it comes from, so a form or a script on another site cannot act
//!   with the device's cookie (its `SameSite=Strict` already keeps it from being sent, this is
//!   the second lock), and writes must be JSON, which a plain form cannot send. The one
//!   exception is the pairing page's own form (`POST /pair/CODE`): it carries no cookie's
//!   authority, only the code in its path, and it must still come from this origin.
//! - **Pairing attempts** are rate-limited: a few wrong codes a minute, then none for the rest
//!   of that minute, so a code cannot be guessed.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The names the server answers to, each as `host` or `host:port`.
#[derive(Debug, Clone)]
pub struct Hosts {
    names: Vec<String>,
}

impl Hosts {
    /// For a server bound to `addr`: that address, `localhost` when it is loopback, and
    /// `extra` (`--host`), each with and without the port for names given without one; bound
    /// to every address, this machine's (`machine`) and `localhost` too.
    pub fn new(addr: std::net::SocketAddr, extra: &[String], machine: &[IpAddr]) -> Hosts {
        let port = addr.port();
        let mut names = vec![crate::addresses::host(addr.ip(), port)];
        if addr.ip().is_loopback() || addr.ip().is_unspecified() {
            names.extend([format!("localhost:{port}"), format!("127.0.0.1:{port}")]);
        }
        if addr.ip().is_unspecified() {
            names.extend(machine.iter().map(|ip| crate::addresses::host(*ip, port)));
        }
        for name in extra {
            let name = name.to_ascii_lowercase();
            if name.contains(':') {
                names.push(name);
            } else {
                names.push(format!("{name}:{port}"));
                names.push(name);
            }
        }
        // Each once, in order (a loopback bind names 127.0.0.1 twice).
        let mut seen = std::collections::HashSet::new();
        names.retain(|name| seen.insert(name.clone()));
        Hosts { names }
    }

    /// Whether a `Host` header names this server.
    pub fn allows_host(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        self.names.contains(&host)
    }

    /// Whether an `Origin` header is this server's own (`http(s)://` one of its names).
    pub fn allows_origin(&self, origin: &str) -> bool {
        let origin = origin.to_ascii_lowercase();
        let Some(rest) = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"))
        else {
            return false;
        };
        self.names.iter().any(|n| *n == rest)
    }

    /// The names, for messages.
    pub fn names(&self) -> &[String] {
        &self.names
    }
}

/// Why a request is refused before it is looked at; `None` lets it through.
pub fn refusal(
    hosts: &Hosts,
    method: &hyper::Method,
    path: &str,
    host: Option<&str>,
    origin: Option<&str>,
    content_type: Option<&str>,
) -> Option<(hyper::StatusCode, String)> {
    use hyper::StatusCode;
    match host {
        Some(host) if hosts.allows_host(host) => {}
        Some(host) => {
            return Some((
                StatusCode::MISDIRECTED_REQUEST,
                format!(
                    "this server does not answer to {host:?} (it answers to {}); `baton serve \
                     --host NAME` adds a name",
                    hosts.names().join(", ")
                ),
            ));
        }
        None => return Some((StatusCode::BAD_REQUEST, "no Host header".into())),
    }
    if let Some(origin) = origin
        && !hosts.allows_origin(origin)
    {
        return Some((
            StatusCode::FORBIDDEN,
            format!("requests from pages of {origin} are refused"),
        ));
    }
    if method == hyper::Method::POST {
        if origin.is_none() {
            return Some((
                StatusCode::FORBIDDEN,
                "a write must say where it comes from (an Origin header)".into(),
            ));
        }
        let form = path.starts_with("/pair/")
            && content_type.is_some_and(|t| t.starts_with("application/x-www-form-urlencoded"));
        if !form && !content_type.is_some_and(|t| t.starts_with("application/json")) {
            return Some((
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "a write's body is JSON (Content-Type: application/json)".into(),
            ));
        }
    }
    None
}

/// At most `limit` failures from one client in any `window`; past that, that client's every
/// attempt is refused until its oldest failure in the window is older than the window. Counted
/// per client address, so one client's guesses do not lock out a real pairing from another.
pub struct Limiter {
    limit: usize,
    window: Duration,
    failures: Mutex<HashMap<IpAddr, Vec<Instant>>>,
}

/// Clients whose failures are remembered at once; past this the quietest is forgotten.
const MAX_CLIENTS: usize = 4096;

impl Limiter {
    pub fn new(limit: usize, window: Duration) -> Limiter {
        Limiter {
            limit,
            window,
            failures: Mutex::new(HashMap::new()),
        }
    }

    /// `Err(wait)` when `client`'s attempts are paused, saying for how long.
    pub fn check(&self, client: IpAddr) -> Result<(), Duration> {
        let now = Instant::now();
        let mut failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        failures.retain(|_, at| {
            at.retain(|at| now.duration_since(*at) < self.window);
            !at.is_empty()
        });
        match failures.get(&client) {
            Some(at) if at.len() >= self.limit => {
                Err(self.window.saturating_sub(now.duration_since(at[0])))
            }
            _ => Ok(()),
        }
    }

    pub fn failed(&self, client: IpAddr) {
        let mut failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        if failures.len() >= MAX_CLIENTS && !failures.contains_key(&client) {
            let quietest = failures
                .iter()
                .min_by_key(|(_, at)| at.last().copied())
                .map(|(client, _)| *client);
            if let Some(quietest) = quietest {
                failures.remove(&quietest);
            }
        }
        failures.entry(client).or_default().push(Instant::now());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::{Method, StatusCode};

    fn loopback() -> Hosts {
        Hosts::new(
            "127.0.0.1:8080".parse().unwrap(),
            &["Baton.example".into()],
            &[],
        )
    }

    #[test]
    fn each_name_is_said_once() {
        assert_eq!(
            loopback().names(),
            [
                "127.0.0.1:8080",
                "localhost:8080",
                "baton.example:8080",
                "baton.example"
            ]
        );
    }

    #[test]
    fn only_the_server_s_own_names_are_hosts_and_origins() {
        let hosts = loopback();
        for ok in [
            "127.0.0.1:8080",
            "localhost:8080",
            "baton.example",
            "BATON.example:8080",
        ] {
            assert!(hosts.allows_host(ok), "{ok}");
        }
        for refused in [
            "127.0.0.1",
            "evil.example:8080",
            "localhost:8081",
            "127.0.0.1:8080.evil",
        ] {
            assert!(!hosts.allows_host(refused), "{refused}");
        }
        assert!(hosts.allows_origin("http://localhost:8080"));
        assert!(hosts.allows_origin("https://baton.example"));
        for refused in [
            "http://evil.example",
            "null",
            "http://localhost:8080@evil.example",
            "file://localhost:8080",
        ] {
            assert!(!hosts.allows_origin(refused), "{refused}");
        }
        // Bound to every address: reached by this machine's addresses, and from itself.
        let machine = [
            "192.168.1.20".parse().unwrap(),
            "2001:db8::7".parse().unwrap(),
        ];
        let wide = Hosts::new("0.0.0.0:9000".parse().unwrap(), &[], &machine);
        for ok in [
            "0.0.0.0:9000",
            "localhost:9000",
            "192.168.1.20:9000",
            "[2001:db8::7]:9000",
        ] {
            assert!(wide.allows_host(ok), "{ok}");
        }
        for refused in [
            "192.168.1.21:9000",
            "192.168.1.20:9001",
            "evil.example:9000",
        ] {
            assert!(!wide.allows_host(refused), "{refused}");
        }
    }

    #[test]
    fn writes_need_this_origin_and_json() {
        let hosts = loopback();
        let host = Some("localhost:8080");
        let origin = Some("http://localhost:8080");
        let json = Some("application/json");
        let api = "/api/operation/task_add";
        assert!(refusal(&hosts, &Method::POST, api, host, origin, json).is_none());
        assert!(refusal(&hosts, &Method::GET, api, host, None, None).is_none());
        let status = |m: &Method, h, o, t| refusal(&hosts, m, api, h, o, t).map(|r| r.0);
        assert_eq!(
            status(&Method::POST, host, None, json),
            Some(StatusCode::FORBIDDEN)
        );
        assert_eq!(
            status(&Method::POST, host, origin, Some("text/plain")),
            Some(StatusCode::UNSUPPORTED_MEDIA_TYPE)
        );
        // A form may post to the pairing page only, and only from this origin.
        let form = Some("application/x-www-form-urlencoded");
        assert_eq!(
            status(&Method::POST, host, origin, form),
            Some(StatusCode::UNSUPPORTED_MEDIA_TYPE)
        );
        let pair = |o| refusal(&hosts, &Method::POST, "/pair/ABC", host, o, form).map(|r| r.0);
        assert_eq!(pair(origin), None);
        assert_eq!(pair(None), Some(StatusCode::FORBIDDEN));
        assert_eq!(pair(Some("null")), Some(StatusCode::FORBIDDEN));
        assert_eq!(
            pair(Some("http://evil.example")),
            Some(StatusCode::FORBIDDEN)
        );
        assert_eq!(
            status(&Method::GET, host, Some("http://evil.example"), None),
            Some(StatusCode::FORBIDDEN)
        );
        assert_eq!(
            status(&Method::GET, Some("evil.example"), None, None),
            Some(StatusCode::MISDIRECTED_REQUEST)
        );
        assert_eq!(
            status(&Method::GET, None, None, None),
            Some(StatusCode::BAD_REQUEST)
        );
    }

    #[test]
    fn failures_past_the_limit_pause_that_clients_attempts_for_the_window() {
        let guesser: IpAddr = "192.0.2.7".parse().unwrap();
        let phone: IpAddr = "192.0.2.8".parse().unwrap();
        let limiter = Limiter::new(3, Duration::from_secs(60));
        for _ in 0..3 {
            assert!(limiter.check(guesser).is_ok());
            limiter.failed(guesser);
        }
        let wait = limiter.check(guesser).unwrap_err();
        assert!(wait > Duration::from_secs(50) && wait <= Duration::from_secs(60));
        assert!(
            limiter.check(phone).is_ok(),
            "another client still pairs while one is paused"
        );
        let short = Limiter::new(1, Duration::ZERO);
        short.failed(guesser);
        assert!(
            short.check(guesser).is_ok(),
            "failures older than the window do not count"
        );
    }
}
