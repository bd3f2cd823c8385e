//! What a sandboxed agent's network reaches: the hosts of its profile's allow-list.
//!
//! An entry is a host (`api.anthropic.com`), a domain with its subdomains (`*.example.com`:
//! `example.com` too), an address, or any of these with a port (`127.0.0.1:4000`,
//! `[::1]:8080`); a URL (`http://localhost:4000/v1`) stands for its host and port. Without a
//! port an entry allows the web's ports, 80 and 443; a loopback address must name its port,
//! since the machine's own services (a database, Baton's own servers) are not the agent's.
//!
//! The defaults ([`defaults`]): the agent CLI's model API and sign-in, and the public package
//! registries; and the address its environment points its model at (Claude Code's
//! `ANTHROPIC_BASE_URL`, Codex's `OPENAI_BASE_URL` and the `base_url` of a provider in the
//! user's own `config.toml`, the Gemini CLI's `GOOGLE_GEMINI_BASE_URL`).

use std::net::IpAddr;

/// One entry: which hosts, on which port (`None`: 80 and 443).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Allowed {
    host: String,
    /// `*.example.com`: the domain and every name under it.
    subdomains: bool,
    port: Option<u16>,
}

/// The hosts and ports an agent's network reaches through its proxy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowList {
    entries: Vec<Allowed>,
}

/// The public package registries every profile reaches (npm, PyPI, crates.io, Go, RubyGems,
/// Maven Central), for downloads: where a registry's publishing API has a host of its own the
/// proxy can tell apart (crates.io's API at `crates.io`, its index and crates at
/// `index.crates.io` and `static.crates.io`; PyPI's uploads at `upload.pypi.org`; Maven
/// Central's at `central.sonatype.com`), that host is not on the list, so a token an agent
/// found could not publish with it. npm and RubyGems publish to the hosts they download from,
/// which a proxy that sees only `CONNECT host:443` cannot tell apart: their tokens are hidden
/// from the sandbox instead ([`crate::Boundary`]).
pub const REGISTRIES: [&str; 10] = [
    "registry.npmjs.org",
    "registry.yarnpkg.com",
    "pypi.org",
    "files.pythonhosted.org",
    "index.crates.io",
    "static.crates.io",
    "proxy.golang.org",
    "sum.golang.org",
    "rubygems.org",
    "repo.maven.apache.org",
];

/// A profile's allow-list: the package registries, its agent CLI's `model_hosts`, the
/// addresses `env` (the agent's variables, later ones winning) gives in `base_url_variables`,
/// the model addresses the user configured for it (`configured`: Codex's providers), and the
/// profile's own `extra` entries.
pub fn defaults(
    model_hosts: &[&str],
    base_url_variables: &[&str],
    env: &[(String, String)],
    configured: &[String],
    extra: &[String],
) -> Result<AllowList, String> {
    let mut entries: Vec<String> = REGISTRIES
        .iter()
        .chain(model_hosts)
        .map(|s| s.to_string())
        .collect();
    for variable in base_url_variables {
        if let Some((_, url)) = env.iter().rev().find(|(k, _)| k == *variable)
            && !url.is_empty()
        {
            entries.push(url.clone());
        }
    }
    entries.extend(configured.iter().cloned());
    let mut list = AllowList::parse(extra)?;
    for entry in entries {
        // A malformed address in the user's own environment allows nothing, and is not an
        // error of the profile's.
        if let Ok(allowed) = parse_entry(&entry) {
            list.entries.push(allowed);
        }
    }
    Ok(list)
}

impl AllowList {
    /// The list of `entries`; the error names the first that is not a host, address or URL.
    pub fn parse(entries: &[String]) -> Result<AllowList, String> {
        let entries = entries
            .iter()
            .map(|e| parse_entry(e))
            .collect::<Result<_, _>>()?;
        Ok(AllowList { entries })
    }

    /// Whether `host` (a name or an address, any case) on `port` may be reached.
    pub fn allows(&self, host: &str, port: u16) -> bool {
        let host = normal_host(host);
        self.entries.iter().any(|allowed| {
            let host_matches = host == allowed.host
                || (allowed.subdomains && host.ends_with(&format!(".{}", allowed.host)));
            let port_matches = match allowed.port {
                Some(p) => p == port,
                None => (port == 80 || port == 443) && !is_loopback(&host),
            };
            host_matches && port_matches
        })
    }

    /// The loopback ports the list names (`127.0.0.1:4000`, `localhost:4000`): the agent
    /// reaches these at the same address inside its sandbox, as the machine's.
    pub fn loopback_ports(&self) -> Vec<u16> {
        let mut ports: Vec<u16> = self
            .entries
            .iter()
            .filter(|a| is_loopback(&a.host) && a.host != "::1")
            .filter_map(|a| a.port)
            .collect();
        ports.sort_unstable();
        ports.dedup();
        ports
    }

    /// The entries, as written back (for a transcript or an error).
    pub fn describe(&self) -> Vec<String> {
        self.entries
            .iter()
            .map(|a| {
                let host = match (a.subdomains, a.host.contains(':')) {
                    (true, _) => format!("*.{}", a.host),
                    (false, true) => format!("[{}]", a.host),
                    (false, false) => a.host.clone(),
                };
                match a.port {
                    Some(port) => format!("{host}:{port}"),
                    None => host,
                }
            })
            .collect()
    }
}

fn normal_host(host: &str) -> String {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.')
        .to_ascii_lowercase()
}

/// Whether `host` is the machine itself: `localhost`, or an address of its loopback.
pub fn is_loopback(host: &str) -> bool {
    let host = normal_host(host);
    host == "localhost"
        || host.ends_with(".localhost")
        || host
            .parse::<IpAddr>()
            .is_ok_and(|ip| ip.is_loopback() || ip.is_unspecified())
}

fn parse_entry(entry: &str) -> Result<Allowed, String> {
    let bad = |why: &str| format!("{entry:?} in sandbox.allow: {why}");
    let trimmed = entry.trim();
    // A URL stands for its host and port.
    let (authority, url_port) = match trimmed.split_once("://") {
        Some((scheme, rest)) => {
            let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
            let authority = authority.rsplit('@').next().unwrap_or_default();
            let port = match scheme.to_ascii_lowercase().as_str() {
                "http" | "ws" => 80,
                "https" | "wss" => 443,
                _ => return Err(bad("only http and https addresses can be allowed")),
            };
            (authority, Some(port))
        }
        None => (trimmed, None),
    };
    let (host, port) = split_port(authority).ok_or_else(|| bad("not a host, address or URL"))?;
    let port = port.or(url_port);
    let (subdomains, host) = match host.strip_prefix("*.") {
        Some(rest) => (true, rest),
        None => (false, host),
    };
    let host = normal_host(host);
    let valid = !host.is_empty()
        && (host.parse::<IpAddr>().is_ok()
            || host.split('.').all(|label| {
                !label.is_empty() && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            }));
    if !valid {
        return Err(bad("not a host, address or URL"));
    }
    if is_loopback(&host) && port.is_none() {
        return Err(bad(
            "a loopback address must name its port (127.0.0.1:4000): the machine's own services are not the agent's",
        ));
    }
    Ok(Allowed {
        host,
        subdomains,
        port,
    })
}

/// `host[:port]` or `[v6][:port]` split; `None` when the port is not a number.
fn split_port(authority: &str) -> Option<(&str, Option<u16>)> {
    if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        return match after.strip_prefix(':') {
            Some(port) => Some((host, Some(port.parse().ok()?))),
            None if after.is_empty() => Some((host, None)),
            None => None,
        };
    }
    match authority.matches(':').count() {
        0 => Some((authority, None)),
        1 => {
            let (host, port) = authority.split_once(':')?;
            Some((host, Some(port.parse().ok()?)))
        }
        // A bare IPv6 address.
        _ => Some((authority, None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(entries: &[&str]) -> AllowList {
        AllowList::parse(&entries.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn hosts_domains_ports_and_urls_allow_what_they_name_and_nothing_else() {
        let allowed = list(&[
            "api.example.com",
            "*.cdn.example.org",
            "git.example.net:9418",
            "http://127.0.0.1:4000/v1",
            "[::1]:8080",
        ]);
        assert!(allowed.allows("api.example.com", 443));
        assert!(allowed.allows("API.Example.COM.", 80));
        assert!(!allowed.allows("api.example.com", 22));
        assert!(!allowed.allows("evil-api.example.com", 443));
        assert!(!allowed.allows("example.com", 443));
        assert!(allowed.allows("a.b.cdn.example.org", 443));
        assert!(allowed.allows("cdn.example.org", 443));
        assert!(!allowed.allows("xcdn.example.org", 443));
        assert!(allowed.allows("git.example.net", 9418));
        assert!(!allowed.allows("git.example.net", 443));
        assert!(allowed.allows("127.0.0.1", 4000));
        assert!(!allowed.allows("127.0.0.1", 5432));
        assert!(!allowed.allows("localhost", 4000));
        assert!(allowed.allows("[::1]", 8080));
        assert_eq!(allowed.loopback_ports(), vec![4000]);
    }

    #[test]
    fn a_bad_entry_is_named_and_loopback_needs_its_port() {
        for bad in [
            "",
            "a b",
            "ftp://x.org",
            "x.org:http",
            "127.0.0.1",
            "localhost",
            "*.",
        ] {
            let err = AllowList::parse(&[bad.to_string()]).unwrap_err();
            assert!(err.contains("sandbox.allow"), "{bad}: {err}");
        }
        assert!(
            AllowList::parse(&["localhost".into()])
                .unwrap_err()
                .contains("must name its port")
        );
    }

    #[test]
    fn the_defaults_are_the_model_api_the_registries_and_where_the_environment_points() {
        let env = vec![
            (
                "ANTHROPIC_BASE_URL".to_string(),
                "http://127.0.0.1:1".to_string(),
            ),
            (
                "ANTHROPIC_BASE_URL".to_string(),
                "http://127.0.0.1:4000".to_string(),
            ),
            (
                "OTHER_BASE_URL".to_string(),
                "http://127.0.0.1:5000".to_string(),
            ),
        ];
        let claude = defaults(
            &["api.anthropic.com"],
            &["ANTHROPIC_BASE_URL"],
            &env,
            &[],
            &[],
        )
        .unwrap();
        assert!(claude.allows("api.anthropic.com", 443));
        assert!(claude.allows("registry.npmjs.org", 443));
        assert!(claude.allows("127.0.0.1", 4000));
        assert!(!claude.allows("127.0.0.1", 1));
        assert!(!claude.allows("127.0.0.1", 5000));
        assert!(!claude.allows("api.openai.com", 443));
        let codex = defaults(
            &["api.openai.com"],
            &[],
            &[],
            &["http://localhost:7000/v1".to_string()],
            &["x.org".into()],
        )
        .unwrap();
        assert!(codex.allows("localhost", 7000));
        assert!(codex.allows("x.org", 443));
        assert!(codex.allows("api.openai.com", 443));
        let exec = defaults(&[], &[], &[], &[], &[]).unwrap();
        assert!(!exec.allows("api.anthropic.com", 443));
        assert!(exec.allows("index.crates.io", 443));
        assert!(exec.allows("static.crates.io", 443));
        // crates.io's API (publishing, yanking) is not a download.
        assert!(!exec.allows("crates.io", 443));
        assert!(defaults(&[], &[], &[], &[], &["bad host".into()]).is_err());
    }
}
