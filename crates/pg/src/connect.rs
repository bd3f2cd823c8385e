//! Connecting to the database a project lives in, the way libpq users expect: a
//! `postgres://USER[:PASSWORD]@HOST[:PORT]/DB[?sslmode=…&sslrootcert=FILE]` URL; the password
//! from the URL, else `PGPASSWORD`, else `~/.pgpass` (never from a project file); TLS with
//! libpq's modes: `disable`, `prefer` (the default: TLS when the server offers it), `require`
//! (TLS, no certificate check), `verify-ca` (the server's certificate signed by the CA in
//! `sslrootcert`) and `verify-full` (that, and the host name matches).
//!
//! Behind PgBouncer in transaction mode the URL says so (`pgbouncer=true`) and where the
//! server itself listens (`listen_port=PORT`, `listen_host=HOST` if it is elsewhere): `LISTEN`
//! needs a session of its own, which transaction pooling does not keep, so waiting workers
//! and watchers listen there; everything else goes through the pooler ([`route`]).

use std::path::PathBuf;

use std::future::Future;
use std::pin::Pin;

use std::sync::Arc;

use tokio_postgres::config::SslMode;
use tokio_postgres::tls::{MakeTlsConnect, TlsConnect};
use tokio_postgres::{Config, NoTls, Socket};

use crate::client::Client;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::error::{Failure, Result};

/// How the server's certificate is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verify {
    Nothing,
    Authority,
    AuthorityAndHost,
}

/// A URL taken apart: what `tokio_postgres::Config` reads, and the TLS settings it does not.
struct Target {
    config: Config,
    verify: Verify,
    root_certificate: Option<PathBuf>,
}

fn invalid(reason: String) -> Failure {
    Failure::from(baton_core::StoreError::InvalidInput {
        field: "store URL",
        reason,
    })
}

fn parse(url: &str) -> Result<Target> {
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let mut kept = Vec::new();
    let mut mode = "prefer".to_string();
    let mut root_certificate = None;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some(("sslmode", value)) => mode = value.to_string(),
            Some(("sslrootcert", value)) => root_certificate = Some(PathBuf::from(value)),
            Some((key, _)) if OWN_PARAMETERS.contains(&key) => {}
            _ => kept.push(pair),
        }
    }
    let (ssl_mode, verify) = match mode.as_str() {
        "disable" => (SslMode::Disable, Verify::Nothing),
        "allow" | "prefer" => (SslMode::Prefer, Verify::Nothing),
        "require" => (SslMode::Require, Verify::Nothing),
        "verify-ca" => (SslMode::Require, Verify::Authority),
        "verify-full" => (SslMode::Require, Verify::AuthorityAndHost),
        other => {
            return Err(invalid(format!(
                "sslmode={other} is not one of disable, prefer, require, verify-ca, verify-full"
            )));
        }
    };
    let rest = if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    let mut config: Config = rest
        .parse()
        .map_err(|e| invalid(format!("not a postgres:// URL ({e})")))?;
    config.ssl_mode(ssl_mode);
    if config.get_password().is_none()
        && let Some(password) = password_from_environment(&config)
    {
        config.password(password);
    }
    Ok(Target {
        config,
        verify,
        root_certificate,
    })
}

/// The URL's parameters that are Baton's own (read by [`route`]), not the driver's.
const OWN_PARAMETERS: [&str; 4] = ["pgbouncer", "listen_port", "listen_host", "pool"];

/// How a store reaches its database: through a pooler in transaction mode or not, and the
/// URL its `LISTEN` connections use (the server's own address behind a pooler, else `url`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Route {
    pub(crate) pooled: bool,
    pub(crate) listen_url: String,
    /// At most this many connections for one store's operations at once (`pool=N`), made only
    /// when every one is busy: a process that runs one operation at a time keeps one.
    pub(crate) pool_size: usize,
}

/// Connections a store opens at most unless the URL says (`pool=N`): enough that a
/// supervisor's workers do not queue their writes on one, few enough that a hundred
/// processes stay within a server's connections.
pub(crate) const DEFAULT_POOL_SIZE: usize = 4;

/// The [`Route`] `url` asks for; a pooler without the server's own port is refused, saying
/// why.
pub(crate) fn route(url: &str) -> Result<Route> {
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let mut pooled = false;
    let mut port = None;
    let mut host = None;
    let mut pool_size = DEFAULT_POOL_SIZE;
    // The driver's parameters, kept for the listening URL.
    let mut kept = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some(("pgbouncer", value)) => {
                pooled = match value {
                    "true" | "1" => true,
                    "false" | "0" => false,
                    other => {
                        return Err(invalid(format!(
                            "pgbouncer={other}: say pgbouncer=true (a pooler in transaction mode) or leave it out"
                        )));
                    }
                }
            }
            Some(("listen_port", value)) => {
                port =
                    Some(value.parse::<u16>().map_err(|_| {
                        invalid(format!("listen_port={value} is not a port number"))
                    })?)
            }
            Some(("listen_host", value)) => host = Some(value.to_string()),
            Some(("pool", value)) => {
                pool_size = value
                    .parse::<usize>()
                    .ok()
                    .filter(|n| (1..=64).contains(n))
                    .ok_or_else(|| {
                        invalid(format!("pool={value}: say how many connections, 1 to 64"))
                    })?
            }
            _ => kept.push(pair),
        }
    }
    if !pooled {
        return Ok(Route {
            pooled,
            listen_url: url.to_string(),
            pool_size,
        });
    }
    let Some(port) = port else {
        return Err(invalid(
            "pgbouncer=true needs listen_port=PORT, the port PostgreSQL itself listens on \
             (and listen_host=HOST if it is not the pooler's host): waiting workers LISTEN \
             there, since a pooled session does not stay theirs between transactions"
                .into(),
        ));
    };
    // postgres://[userinfo@]host[:port]/db: the address swapped for the server's, and the
    // pooler's parameters dropped.
    let Some((scheme, rest)) = base.split_once("://") else {
        return Err(invalid(
            "pgbouncer=true needs a postgres://USER@HOST:PORT/DB URL".into(),
        ));
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let (userinfo, address) = match authority.rfind('@') {
        Some(at) => (&authority[..=at], &authority[at + 1..]),
        None => ("", authority),
    };
    let pooler_host = match address.rfind(':') {
        Some(colon) if !address[colon..].contains(']') => &address[..colon],
        _ => address,
    };
    let host = host.as_deref().unwrap_or(pooler_host);
    let mut listen_url = format!("{scheme}://{userinfo}{host}:{port}{path}");
    if !kept.is_empty() {
        listen_url = format!("{listen_url}?{}", kept.join("&"));
    }
    Ok(Route {
        pooled,
        listen_url,
        pool_size,
    })
}

/// Connects to `url`. TLS is rustls (pure Rust, linked in: a `baton` process loads no TLS
/// library at start), set up only when TLS will be spoken: at once for `require` and the
/// verifying modes, never for `disable`, and for `prefer` only once the server has said it
/// speaks TLS.
pub(crate) fn connect(url: &str) -> Result<Client> {
    let target = parse(url)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| baton_core::StoreError::Database {
            message: format!("cannot start a runtime for the connection to PostgreSQL: {e}"),
        })?;
    Ok(match target.config.get_ssl_mode() {
        SslMode::Disable => Client::connect(runtime, &target.config, NoTls)?,
        SslMode::Prefer => {
            let tls = LazyTls {
                verify: target.verify,
                root_certificate: target.root_certificate.clone(),
            };
            Client::connect(runtime, &target.config, tls)?
        }
        _ => {
            let tls = tls_connector(target.verify, target.root_certificate.clone())?;
            Client::connect(runtime, &target.config, tls)?
        }
    })
}

/// The TLS connector for a target's settings, as libpq checks certificates: `Nothing` takes
/// any certificate (the connection is encrypted, not authenticated), `Authority` wants one the
/// CA in the root certificate file signed, `AuthorityAndHost` also for the host connected to.
fn tls_connector(verify: Verify, root_certificate: Option<PathBuf>) -> Result<MakeRustlsConnect> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let unavailable = |e: rustls::Error| invalid(format!("TLS is not available: {e}"));
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(unavailable)?;
    let config = if verify == Verify::Nothing {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
            .with_no_client_auth()
    } else {
        let root = root_certificate.or_else(|| home().map(|h| h.join(".postgresql/root.crt")));
        let Some(root) = root.filter(|r| r.is_file()) else {
            return Err(invalid(
                "sslmode=verify-ca and verify-full need the CA's certificate: sslrootcert=FILE \
                 (or ~/.postgresql/root.crt)"
                    .into(),
            ));
        };
        let unreadable = |e: String| {
            invalid(format!(
                "cannot read the CA certificate {}: {e}",
                root.display()
            ))
        };
        let mut roots = RootCertStore::empty();
        for certificate in
            CertificateDer::pem_file_iter(&root).map_err(|e| unreadable(e.to_string()))?
        {
            let certificate = certificate.map_err(|e| unreadable(e.to_string()))?;
            roots
                .add(certificate)
                .map_err(|e| unreadable(e.to_string()))?;
        }
        if roots.is_empty() {
            return Err(unreadable("it holds no certificate".into()));
        }
        let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
            .build()
            .map_err(|e| unreadable(e.to_string()))?;
        if verify == Verify::AuthorityAndHost {
            builder.with_webpki_verifier(webpki).with_no_client_auth()
        } else {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AnyHost(webpki)))
                .with_no_client_auth()
        }
    };
    Ok(MakeRustlsConnect::new(config))
}

/// `sslmode=require`: any certificate (libpq's meaning: encrypted, not authenticated); the
/// handshake's signatures are still checked.
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        certificate: &CertificateDer<'_>,
        signature: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            certificate,
            signature,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        certificate: &CertificateDer<'_>,
        signature: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            certificate,
            signature,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `sslmode=verify-ca`: a certificate the CA signed, for whatever host.
#[derive(Debug)]
struct AnyHost(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for AnyHost {
    fn verify_server_cert(
        &self,
        certificate: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(certificate, intermediates, name, ocsp, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        certificate: &CertificateDer<'_>,
        signature: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.0
            .verify_tls12_signature(message, certificate, signature)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        certificate: &CertificateDer<'_>,
        signature: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.0
            .verify_tls13_signature(message, certificate, signature)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// TLS for `sslmode=prefer`: the connector is built when the server agrees to TLS.
struct LazyTls {
    verify: Verify,
    root_certificate: Option<PathBuf>,
}

/// [`LazyTls`] for one host.
struct LazyConnect {
    verify: Verify,
    root_certificate: Option<PathBuf>,
    domain: String,
}

type TlsError = Box<dyn std::error::Error + Send + Sync>;
type RustlsStream = <MakeRustlsConnect as MakeTlsConnect<Socket>>::Stream;

impl MakeTlsConnect<Socket> for LazyTls {
    type Stream = RustlsStream;
    type TlsConnect = LazyConnect;
    type Error = TlsError;

    fn make_tls_connect(&mut self, domain: &str) -> std::result::Result<LazyConnect, TlsError> {
        Ok(LazyConnect {
            verify: self.verify,
            root_certificate: self.root_certificate.clone(),
            domain: domain.to_string(),
        })
    }
}

impl TlsConnect<Socket> for LazyConnect {
    type Stream = RustlsStream;
    type Error = TlsError;
    type Future = Pin<Box<dyn Future<Output = std::result::Result<Self::Stream, TlsError>> + Send>>;

    fn connect(self, stream: Socket) -> Self::Future {
        Box::pin(async move {
            let mut maker = tls_connector(self.verify, self.root_certificate).map_err(|e| {
                TlsError::from(match e {
                    Failure::Store(e) => e.to_string(),
                    Failure::Database(e) | Failure::KeptMissing(_, e) => e.to_string(),
                    Failure::Unchecked => "the project was not checked".to_string(),
                })
            })?;
            let connect = MakeTlsConnect::<Socket>::make_tls_connect(&mut maker, &self.domain)?;
            Ok(connect.connect(stream).await?)
        })
    }
}

/// `user@host:port/db` from `url`, for messages: never the password.
pub(crate) fn describe(url: &str) -> String {
    let base = url.split_once('?').map_or(url, |(base, _)| base);
    let Ok(config) = base.parse::<Config>() else {
        return "(an unreadable URL)".to_string();
    };
    let (host, port) = host_and_port(&config);
    format!(
        "{}@{host}:{port}/{}",
        config.get_user().unwrap_or(""),
        config.get_dbname().unwrap_or("")
    )
}

/// The first host and port a URL names, with libpq's defaults.
fn host_and_port(config: &Config) -> (String, u16) {
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(name)) => name.clone(),
        Some(tokio_postgres::config::Host::Unix(path)) => path.display().to_string(),
        None => "localhost".into(),
    };
    (host, config.get_ports().first().copied().unwrap_or(5432))
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME").map(PathBuf::from)
}

/// `PGPASSWORD`, else the first matching line of `PGPASSFILE` or `~/.pgpass`
/// (`host:port:database:user:password`, `*` matching anything, `\:` a colon), as libpq reads
/// them.
fn password_from_environment(config: &Config) -> Option<Vec<u8>> {
    if let Some(password) = std::env::var_os("PGPASSWORD") {
        return Some(password.into_encoded_bytes());
    }
    let file = std::env::var_os("PGPASSFILE")
        .map(PathBuf::from)
        .or_else(|| home().map(|h| h.join(".pgpass")))?;
    let text = std::fs::read_to_string(file).ok()?;
    let (host, port) = host_and_port(config);
    let port = port.to_string();
    let database = config.get_dbname().unwrap_or("").to_string();
    let user = config.get_user().unwrap_or("").to_string();
    let wanted = [host, port, database, user];
    text.lines()
        .filter(|line| !line.trim_start().starts_with('#'))
        .find_map(|line| {
            let fields = split_pgpass(line);
            if fields.len() != 5 {
                return None;
            }
            let matches = wanted
                .iter()
                .zip(&fields)
                .all(|(want, field)| field == "*" || field == want);
            matches.then(|| fields[4].clone().into_bytes())
        })
}

/// One `.pgpass` line's fields (`\:` and `\\` escaped).
fn split_pgpass(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(next) = chars.next() {
                    fields.last_mut().expect("one field").push(next);
                }
            }
            ':' => fields.push(String::new()),
            other => fields.last_mut().expect("one field").push(other),
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pooler_url_routes_listening_to_the_server_itself() {
        let direct = route("postgres://u@db:5432/b?sslmode=require").unwrap();
        assert!(!direct.pooled);
        assert_eq!(direct.listen_url, "postgres://u@db:5432/b?sslmode=require");
        let pooled =
            route("postgres://u:pw@pool:6432/b?pgbouncer=true&listen_port=5432&sslmode=require")
                .unwrap();
        assert!(pooled.pooled);
        assert_eq!(
            pooled.listen_url,
            "postgres://u:pw@pool:5432/b?sslmode=require"
        );
        let elsewhere =
            route("postgres://u@pool/b?listen_host=db&pgbouncer=true&listen_port=5433").unwrap();
        assert_eq!(elsewhere.listen_url, "postgres://u@db:5433/b");
        let v6 = route("postgres://u@[::1]:6432/b?pgbouncer=true&listen_port=5432").unwrap();
        assert_eq!(v6.listen_url, "postgres://u@[::1]:5432/b");
    }

    #[test]
    fn a_pooler_url_without_the_servers_port_or_with_a_bad_value_is_refused() {
        let no_port = route("postgres://u@pool:6432/b?pgbouncer=true")
            .unwrap_err()
            .at("s");
        assert!(
            no_port.to_string().contains("listen_port=PORT"),
            "{no_port}"
        );
        let bad = route("postgres://u@pool/b?pgbouncer=yes&listen_port=1")
            .unwrap_err()
            .at("s");
        assert!(bad.to_string().contains("pgbouncer=yes"), "{bad}");
        let port = route("postgres://u@pool/b?pgbouncer=true&listen_port=x")
            .unwrap_err()
            .at("s");
        assert!(port.to_string().contains("not a port number"), "{port}");
        // The driver never sees Baton's own parameters.
        let target = parse("postgres://u@pool:6432/b?pgbouncer=true&listen_port=5432").unwrap();
        assert_eq!(target.config.get_ports(), [6432]);
    }

    #[test]
    fn pgpass_lines_split_on_unescaped_colons() {
        assert_eq!(
            split_pgpass(r"db.example:5432:*:alice:pa\:ss\\word"),
            ["db.example", "5432", "*", "alice", r"pa:ss\word"]
        );
    }

    #[test]
    fn tls_settings_are_read_and_unknown_modes_refused() {
        let target = parse("postgres://u@h/db?sslmode=verify-full&sslrootcert=/ca.crt").unwrap();
        assert_eq!(target.verify, Verify::AuthorityAndHost);
        assert_eq!(target.config.get_ssl_mode(), SslMode::Require);
        assert_eq!(target.root_certificate, Some(PathBuf::from("/ca.crt")));
        let plain = parse("postgres://u@h/db").unwrap();
        assert_eq!(plain.config.get_ssl_mode(), SslMode::Prefer);
        assert!(parse("postgres://u@h/db?sslmode=sometimes").is_err());
    }
}
