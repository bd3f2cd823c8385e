//! # baton-serve
//!
//! `baton serve`: the desktop's UI for a browser anywhere the lead is. The same React build the
//! desktop app loads is served as files; its calls reach the same `baton-api` catalogue the
//! desktop's one IPC command runs, over `POST /api/operation/NAME`; the change feed is pushed
//! over a WebSocket (or as server-sent events to a script), so a page redraws when the desktop
//! does ([`routes`], [`feed`], [`socket`]).
//!
//! Nothing is served to a browser that is not paired: `baton serve pair` makes a one-time
//! link (and a QR code) that gives the browser a device cookie (HttpOnly, SameSite=Strict),
//! as lead or responder ([`devices`], [`scope`]); `baton serve devices` lists them and
//! `revoke` ends one at its next request. Host and Origin are checked on every request and
//! pairing is rate-limited ([`guard`]). It listens on loopback unless told otherwise.

pub mod addresses;
pub mod devices;
pub mod feed;
pub mod guard;
mod gzip;
pub mod notify;
pub mod push;
pub mod routes;
pub mod scope;
pub mod socket;
pub mod tell;
mod tls;
pub mod ui;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use baton_api::{Error, OpenProject};
use baton_core::ErrorKind;
use hyper_util::rt::TokioIo;
use serde::{Deserialize, Serialize};

pub use devices::{Device, Devices, Scope};

/// At most this many wrong pairing codes a minute.
pub const PAIRING_FAILURES_PER_MINUTE: usize = 5;

/// Options of `baton serve`.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Where to listen (loopback by default).
    pub listen: SocketAddr,
    /// Further names the server is reached by (a tunnel's, a reverse proxy's).
    pub hosts: Vec<String>,
    /// A folder holding the UI's build to serve instead of the one in the binary
    /// ([`ui::UiSource::choose`]).
    pub ui_dir: Option<PathBuf>,
    /// HTTPS with this certificate chain and private key (PEM files), through rustls.
    pub tls: Option<Tls>,
}

/// A certificate chain and its private key, PEM.
#[derive(Debug, Clone)]
pub struct Tls {
    pub certificate: PathBuf,
    pub key: PathBuf,
}

/// A running server, as `baton serve pair` finds it: `.coordination/serve/server.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Running {
    pub url: String,
    pub pid: u32,
}

fn server_file(project: &OpenProject) -> PathBuf {
    project.local().root().join("serve/server.json")
}

/// The server running for this project on this machine, if any.
pub fn running(project: &OpenProject) -> Option<Running> {
    let text = std::fs::read(server_file(project)).ok()?;
    let running: Running = serde_json::from_slice(&text).ok()?;
    baton_fs::pid_alive(running.pid).then_some(running)
}

/// The link that pairs a browser with `code`.
pub fn pairing_link(url: &str, code: &str) -> String {
    format!("{}/pair/{code}", url.trim_end_matches('/'))
}

/// `text` as a QR code drawn with half-block characters, two rows of modules per line, for a
/// terminal.
pub fn qr_code(text: &str) -> String {
    match qrcode::QrCode::new(text.as_bytes()) {
        Ok(code) => code
            .render::<qrcode::render::unicode::Dense1x2>()
            .quiet_zone(true)
            .build(),
        Err(_) => String::new(),
    }
}

/// `text` as a QR code in SVG, for a page to show.
pub fn qr_svg(text: &str) -> String {
    match qrcode::QrCode::new(text.as_bytes()) {
        Ok(code) => code
            .render::<qrcode::render::svg::Color<'_>>()
            .min_dimensions(200, 200)
            .quiet_zone(true)
            .build(),
        Err(_) => String::new(),
    }
}

/// Serves the UI for `project` until SIGTERM or Ctrl-C; `ready` is told, once the server
/// listens, the URLs it is reached by, the one to offer first ([`addresses::reachable_hosts`]).
pub fn serve(
    project: OpenProject,
    options: ServeOptions,
    ready: impl FnOnce(&[String]),
) -> Result<(), Error> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            Error::new(
                ErrorKind::Internal,
                format!("cannot start the runtime: {e}"),
            )
        })?;
    let info_file = server_file(&project);
    let acceptor = options.tls.as_ref().map(tls::acceptor).transpose()?;
    let outcome = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(options.listen)
            .await
            .map_err(|e| {
                Error::new(
                    ErrorKind::Io,
                    format!("cannot listen on {}: {e}", options.listen),
                )
            })?;
        let bound = listener
            .local_addr()
            .map_err(|e| Error::new(ErrorKind::Io, e.to_string()))?;
        let devices = Devices::of(project.local());
        let machine = match bound.ip().is_unspecified() {
            true => addresses::machine_addresses(),
            false => Vec::new(),
        };
        // What waits for the lead is pushed to the devices that ask (with the project's key,
        // made once) and sent to the webhooks notify.toml names.
        let config = notify::NotifyConfig::load(project.local())
            .map_err(|e| Error::new(ErrorKind::InvalidInput, e))?;
        let pusher = match push::vapid::PushKey::load_or_make(&project.local().root().join("serve"))
        {
            Ok(key) => Some(Arc::new(push::Pusher::new(
                key,
                devices.clone(),
                config.as_ref().and_then(|c| c.push_contact.clone()),
            ))),
            Err(e) => {
                eprintln!("baton serve: nothing is pushed to phones: {e}");
                None
            }
        };
        let server = Arc::new(routes::Server {
            paired: feed::paired(devices.clone()),
            devices,
            hosts: guard::Hosts::new(bound, &options.hosts, &machine),
            pairing: guard::Limiter::new(PAIRING_FAILURES_PER_MINUTE, Duration::from_secs(60)),
            ui: ui::UiSource::choose(options.ui_dir.clone()),
            events: feed::start(&project)?,
            secure: acceptor.is_some(),
            gzipped: gzip::Gzipped::default(),
            project: project.clone(),
            pusher: pusher.clone(),
        });
        let scheme = if acceptor.is_some() { "https" } else { "http" };
        let urls: Vec<String> = addresses::reachable_hosts(bound, &options.hosts, &machine)
            .into_iter()
            .map(|host| format!("{scheme}://{host}"))
            .collect();
        let url = urls[0].clone();
        // Links lead to this server unless notify.toml says otherwise.
        let base = config
            .as_ref()
            .and_then(|c| c.link_base.clone())
            .unwrap_or_else(|| url.clone());
        tell::start(config, pusher, &server.events, base);
        let running = Running {
            url: url.clone(),
            pid: std::process::id(),
        };
        if let Some(dir) = info_file.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::new(ErrorKind::Io, format!("{}: {e}", dir.display())))?;
        }
        baton_fs::write_atomic_private(
            &info_file,
            &serde_json::to_vec(&running).expect("serialises"),
        )
        .map_err(|e| {
            Error::new(
                ErrorKind::Io,
                format!("cannot write {}: {e}", info_file.display()),
            )
        })?;
        // The stop signals are ours before anyone is told the server is up: a SIGTERM sent
        // as soon as the URL is printed ends the server cleanly instead of killing it.
        let stops = Stops::install()?;
        ready(&urls);
        accept(listener, server, acceptor, stops).await
    });
    let _ = std::fs::remove_file(&info_file);
    runtime.shutdown_background();
    outcome
}

/// SIGTERM and SIGINT (Ctrl-C), caught from the moment they are installed.
struct Stops {
    term: tokio::signal::unix::Signal,
    interrupt: tokio::signal::unix::Signal,
}

impl Stops {
    fn install() -> Result<Self, Error> {
        use tokio::signal::unix::{SignalKind, signal};
        let catch = |kind| {
            signal(kind)
                .map_err(|e| Error::new(ErrorKind::Internal, format!("cannot catch signals: {e}")))
        };
        Ok(Self {
            term: catch(SignalKind::terminate())?,
            interrupt: catch(SignalKind::interrupt())?,
        })
    }
}

async fn accept(
    listener: tokio::net::TcpListener,
    server: Arc<routes::Server>,
    tls: Option<tokio_rustls::TlsAcceptor>,
    mut stops: Stops,
) -> Result<(), Error> {
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(_) => continue,
            },
            _ = stops.interrupt.recv() => return Ok(()),
            _ = stops.term.recv() => return Ok(()),
        };
        let server = server.clone();
        let tls = tls.clone();
        tokio::spawn(async move {
            match tls {
                // A handshake that fails (a client that does not trust the certificate, plain
                // HTTP on the TLS port) ends that connection only.
                Some(tls) => {
                    if let Ok(stream) = tls.accept(stream).await {
                        connection(TokioIo::new(stream), server, peer).await;
                    }
                }
                None => connection(TokioIo::new(stream), server, peer).await,
            }
        });
    }
}

/// Serves one connection's requests, each told which client it came from.
async fn connection<I>(io: I, server: Arc<routes::Server>, peer: SocketAddr)
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let handler = hyper::service::service_fn(move |mut request: hyper::Request<_>| {
        request.extensions_mut().insert(routes::Client(peer.ip()));
        let server = server.clone();
        async move { Ok::<_, std::convert::Infallible>(routes::handle(server, request).await) }
    });
    let _ = hyper::server::conn::http1::Builder::new()
        .serve_connection(io, handler)
        .with_upgrades()
        .await;
}
