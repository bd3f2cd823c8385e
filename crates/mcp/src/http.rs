//! The optional streamable-HTTP transport (`baton mcp --http 127.0.0.1:PORT`), for clients that
//! cannot start a process. It listens on loopback only, requires a bearer token on every
//! request, and refuses requests whose `Host` is not loopback or whose `Origin` is not a
//! loopback origin (DNS rebinding, pages in a browser).
//!
//! The token is `--token` / `BATON_MCP_TOKEN` when given, otherwise 32 random bytes; it is
//! written, with the URL, to `.coordination/mcp/http.json` (mode 0600) for local clients.
//!
//! Its sessions are bounded ([`crate::sessions`]): at most `--http-max-sessions` live at once
//! (a new one beyond is answered 503, saying so), and one idle for `--http-idle` is closed.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use baton_api::Error;
use baton_core::ErrorKind;
use bytes::Bytes;
use http_body_util::Full;
use http_body_util::combinators::BoxBody;
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::log::Log;
use crate::server::BatonServer;
use crate::sessions::{Bounded, SessionLimits};

/// The path the MCP endpoint is served on.
pub const ENDPOINT: &str = "/mcp";

/// Checks that `address` is a loopback socket address.
pub fn loopback(address: &str) -> Result<SocketAddr, Error> {
    let addr: SocketAddr = address.parse().map_err(|_| {
        Error::new(
            ErrorKind::InvalidInput,
            format!("--http {address:?}: give IP:PORT, e.g. 127.0.0.1:8765"),
        )
    })?;
    if !addr.ip().is_loopback() {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "--http {address}: Baton listens on loopback only (127.0.0.1 or [::1]); use an SSH tunnel to reach it from elsewhere"
            ),
        ));
    }
    Ok(addr)
}

/// A random token, hex-encoded, from the system's random source.
pub fn random_token() -> std::io::Result<String> {
    baton_fs::random_hex::<32>()
}

/// Whether `request` would open a session: a POST without a session's id.
fn opens_a_session<B>(request: &Request<B>) -> bool {
    request.method() == hyper::Method::POST && !request.headers().contains_key("mcp-session-id")
}

fn refuse(status: StatusCode, message: &str) -> Response<BoxBody<Bytes, Infallible>> {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32001, "message": message}});
    let mut response = Response::new(BoxBody::new(Full::new(Bytes::from(body.to_string()))));
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        "application/json".parse().expect("valid"),
    );
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(
            hyper::header::WWW_AUTHENTICATE,
            "Bearer".parse().expect("valid"),
        );
    }
    response
}

/// Whether the request carries `Authorization: Bearer <token>` (compared in constant time).
fn authorized<B>(request: &Request<B>, token: &str) -> bool {
    let Some(given) = request
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
    else {
        return false;
    };
    given.len() == token.len()
        && given
            .bytes()
            .zip(token.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// Whether the request comes from no page (no `Origin`, as from a tool or a script) or from a
/// page on this machine: `http(s)://` and a loopback host (`127.0.0.1`, `localhost`, `[::1]`),
/// any port. A page elsewhere (DNS rebinding, a site the user visits) is refused; the bearer
/// token still guards every request either way.
fn loopback_origin<B>(request: &Request<B>) -> bool {
    let Some(origin) = request.headers().get(hyper::header::ORIGIN) else {
        return true;
    };
    let Ok(origin) = origin.to_str() else {
        return false;
    };
    let Some(rest) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    let host = match rest.strip_prefix('[') {
        Some(v6) => v6.split_once(']'),
        None => Some(
            rest.split_once(':')
                .map_or((rest, ""), |(host, port)| (host, port)),
        ),
    };
    let Some((host, after)) = host else {
        return false;
    };
    let port_ok = after.is_empty()
        || after
            .trim_start_matches(':')
            .bytes()
            .all(|b| b.is_ascii_digit());
    port_ok && matches!(host, "127.0.0.1" | "localhost" | "::1")
}

/// Serves `server` over streamable HTTP on `addr` until `cancel` fires. Returns the bound
/// address once listening (port 0 picks a free port) through `bound`.
pub async fn serve(
    server: BatonServer,
    addr: SocketAddr,
    token: String,
    log: Log,
    cancel: CancellationToken,
    limits: SessionLimits,
    bound: impl FnOnce(SocketAddr),
) -> Result<(), Error> {
    let cannot_listen =
        |e: std::io::Error| Error::new(ErrorKind::Io, format!("cannot listen on {addr}: {e}"));
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(cannot_listen)?;
    let local = listener.local_addr().map_err(cannot_listen)?;
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(["127.0.0.1", "localhost", "::1", "[::1]"].map(|h| h.to_string()))
        // Origins are checked before the service sees a request (`loopback_origin`): any
        // loopback origin on any port (an inspector page, a local tool), nothing else.
        .disable_allowed_origins()
        .with_legacy_session_mode(true)
        .with_cancellation_token(cancel.child_token());
    let sessions = Arc::new(Bounded::new(limits));
    let service =
        StreamableHttpService::new(move || Ok(server.for_session()), sessions.clone(), config);
    // Idle sessions closed as they pass the limit, not only when the cap is reached.
    {
        let (sessions, cancel) = (sessions.clone(), cancel.clone());
        let every = (limits.idle / 2).max(std::time::Duration::from_millis(500));
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = tokio::time::sleep(every) => { sessions.reclaim().await; }
                    _ = cancel.cancelled() => return,
                }
            }
        });
    }
    bound(local);
    let token = Arc::new(token);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => { log.line(&format!("accept failed: {e}")); continue; }
            },
            _ = cancel.cancelled() => return Ok(()),
        };
        let service = service.clone();
        let token = token.clone();
        let log = log.clone();
        let sessions = sessions.clone();
        tokio::spawn(async move {
            let handler = hyper::service::service_fn(move |request: Request<Incoming>| {
                let service = service.clone();
                let token = token.clone();
                let sessions = sessions.clone();
                async move {
                    if request.uri().path() != ENDPOINT {
                        return Ok::<_, Infallible>(refuse(
                            StatusCode::NOT_FOUND,
                            "the MCP endpoint is /mcp",
                        ));
                    }
                    if !loopback_origin(&request) {
                        return Ok(refuse(
                            StatusCode::FORBIDDEN,
                            "only a page on this machine (a loopback Origin) may call this server",
                        ));
                    }
                    if !authorized(&request, &token) {
                        return Ok(refuse(
                            StatusCode::UNAUTHORIZED,
                            "a bearer token is required (see .coordination/mcp/http.json)",
                        ));
                    }
                    // A new session at the cap: said plainly, not as the service's error.
                    if opens_a_session(&request)
                        && let Err(full) = sessions.make_room().await
                    {
                        return Ok(refuse(StatusCode::SERVICE_UNAVAILABLE, &full.to_string()));
                    }
                    Ok(service.handle(request).await)
                }
            });
            if let Err(e) = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), handler)
                .await
            {
                log.line(&format!("HTTP connection from {peer} ended: {e}"));
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_addresses_are_accepted() {
        assert!(loopback("127.0.0.1:0").is_ok());
        assert!(loopback("[::1]:8765").is_ok());
        assert!(
            loopback("0.0.0.0:8765")
                .unwrap_err()
                .to_string()
                .contains("loopback only")
        );
        assert!(loopback("192.168.1.4:80").is_err());
        let err = loopback("localhost").unwrap_err();
        assert!(err.to_string().contains("IP:PORT"), "{err}");
        assert_eq!(err.kind(), ErrorKind::InvalidInput);
    }

    #[test]
    fn loopback_origins_on_any_port_are_accepted_and_others_refused() {
        let with = |origin: Option<&str>| {
            let mut request = Request::builder();
            if let Some(origin) = origin {
                request = request.header("Origin", origin);
            }
            loopback_origin(&request.body(()).unwrap())
        };
        for ok in [
            None,
            Some("http://localhost"),
            Some("http://localhost:6274"),
            Some("http://127.0.0.1:8765"),
            Some("https://[::1]:3000"),
            Some("http://[::1]"),
        ] {
            assert!(with(ok), "{ok:?}");
        }
        for refused in [
            "http://evil.example",
            "http://localhost.evil.example",
            "http://127.0.0.1.evil.example:80",
            "http://[::1].evil",
            "file://localhost",
            "null",
            "http://localhost:80/x",
            "http://localhost:6274@evil.example",
        ] {
            assert!(!with(Some(refused)), "{refused}");
        }
    }

    #[test]
    fn the_bearer_token_must_match_exactly() {
        let request = |auth: &str| {
            Request::builder()
                .header("Authorization", auth)
                .body(())
                .unwrap()
        };
        assert!(authorized(&request("Bearer abc"), "abc"));
        assert!(!authorized(&request("Bearer abd"), "abc"));
        assert!(!authorized(&request("Bearer ab"), "abc"));
        assert!(!authorized(&request("Basic abc"), "abc"));
        assert!(!authorized(&Request::builder().body(()).unwrap(), "abc"));
        assert_eq!(random_token().unwrap().len(), 64);
    }
}
