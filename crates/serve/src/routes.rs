//! One request, from its headers to its answer.
//!
//! - `GET /pair/CODE`: a page asking whether to pair this browser; opening the link changes
//!   nothing, so a chat app's link preview cannot use it up.
//! - `POST /pair/CODE` (that page's form): pairs this browser (a device cookie, then the app),
//!   rate-limited.
//! - `POST /api/operation/NAME`: the catalogue's operation `NAME` with the JSON body as its
//!   request, as the desktop's one IPC command runs it, if the device's scope allows it.
//! - `POST /api/command/NAME`: what the desktop's other commands read (the project, its notes,
//!   a task's result, the handoff graph, the board as changed since the one the page holds:
//!   `board`, `baton_api::board`; `whoami`), and the device's push subscription
//!   (`push_key`, `push_subscribe`, `push_unsubscribe`: [`crate::push`]).
//! - `GET /api/feed`: the change feed over a WebSocket (the served UI's pages), or as
//!   server-sent events (scripts); each message is one batch, a JSON array of events.
//! - anything else under `/api/`: not found; without a paired device's cookie, every `/api/`
//!   path is 401, saying how to pair.
//! - other paths: the UI's files.

use std::convert::Infallible;
use std::sync::Arc;

use baton_api::{Error, OpenProject};
use baton_core::{Confinement, ErrorKind};
use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::Value;

use crate::devices::{Device, Devices};
use crate::guard::{Hosts, Limiter};
use crate::ui::UiBytes;

pub type Body = BoxBody<Bytes, Infallible>;

/// The cookie a paired browser carries.
pub const COOKIE: &str = "baton_device";
/// A request body larger than this is refused.
const MAX_BODY: usize = 4 * 1024 * 1024;

/// What every request needs.
pub struct Server {
    pub project: OpenProject,
    pub devices: Devices,
    pub hosts: Hosts,
    pub pairing: Limiter,
    /// Where the UI's files come from; none: this binary has no build and none is installed.
    pub ui: Option<crate::ui::UiSource>,
    pub events: tokio::sync::broadcast::Sender<Arc<str>>,
    /// The paired devices, as open feeds check them.
    pub paired: crate::feed::Paired,
    /// Whether the cookie is sent over TLS only.
    pub secure: bool,
    /// The UI's text files, compressed once each.
    pub gzipped: crate::gzip::Gzipped,
    /// Pushes to subscribed devices; none when the project's push key cannot be had.
    pub pusher: Option<Arc<crate::push::Pusher>>,
}

fn full(bytes: impl Into<Bytes>) -> Body {
    BoxBody::new(Full::new(bytes.into()))
}

fn json_response(status: StatusCode, json: String) -> Response<Body> {
    let mut response = Response::new(full(json));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// The HTTP status an error's kind is answered with.
pub fn status_of(kind: ErrorKind) -> StatusCode {
    match kind {
        ErrorKind::NotPaired => StatusCode::UNAUTHORIZED,
        ErrorKind::NotAllowed | ErrorKind::PairingRefused | ErrorKind::NotYou => {
            StatusCode::FORBIDDEN
        }
        ErrorKind::TooManyAttempts => StatusCode::TOO_MANY_REQUESTS,
        ErrorKind::InvalidArguments | ErrorKind::InvalidInput | ErrorKind::InvalidName => {
            StatusCode::BAD_REQUEST
        }
        ErrorKind::UnknownTool
        | ErrorKind::UnknownTask
        | ErrorKind::UnknownQuestion
        | ErrorKind::UnknownDevice
        | ErrorKind::UnknownAgent
        | ErrorKind::UnknownRun => StatusCode::NOT_FOUND,
        ErrorKind::Internal | ErrorKind::Io | ErrorKind::Database | ErrorKind::CorruptFile => {
            StatusCode::INTERNAL_SERVER_ERROR
        }
        _ => StatusCode::CONFLICT,
    }
}

fn error_response(error: &Error) -> Response<Body> {
    let body = serde_json::to_string(&error.body()).expect("an error body serialises");
    json_response(status_of(error.kind()), body)
}

fn plain(status: StatusCode, message: &str) -> Response<Body> {
    let mut response = Response::new(full(format!("{message}\n")));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

fn header_str(request: &Request<Incoming>, name: header::HeaderName) -> Option<&str> {
    request.headers().get(name).and_then(|v| v.to_str().ok())
}

/// The device token in the request's cookie, if any.
fn token_of(request: &Request<Incoming>) -> Option<String> {
    request
        .headers()
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|pair| pair.trim().strip_prefix(&format!("{COOKIE}=")[..]))
        .map(str::to_string)
}

fn not_paired() -> Error {
    Error::new(
        ErrorKind::NotPaired,
        "this browser is not paired: on the machine that serves, run `baton serve pair` and \
         open the link it prints here",
    )
}

/// Answers one request.
pub async fn handle(server: Arc<Server>, request: Request<Incoming>) -> Response<Body> {
    if let Some((status, why)) = crate::guard::refusal(
        &server.hosts,
        request.method(),
        request.uri().path(),
        header_str(&request, header::HOST),
        header_str(&request, header::ORIGIN),
        header_str(&request, header::CONTENT_TYPE),
    ) {
        return plain(status, &why);
    }
    let path = request.uri().path().to_string();
    let mut response = if let Some(code) = path.strip_prefix("/pair/") {
        match *request.method() {
            Method::POST => pair(&server, &request, code.to_string()).await,
            Method::GET | Method::HEAD => pairing_page_for(&server, &request, code).await,
            _ => plain(
                StatusCode::METHOD_NOT_ALLOWED,
                "a pairing link is opened with GET and confirmed with POST",
            ),
        }
    } else if let Some(api) = path.strip_prefix("/api/") {
        api_request(server.clone(), request, api.to_string()).await
    } else if request.method() == Method::GET || request.method() == Method::HEAD {
        let gzip = crate::gzip::accepted(
            request
                .headers()
                .get(header::ACCEPT_ENCODING)
                .and_then(|v| v.to_str().ok()),
        );
        file(&server, &path, gzip)
    } else {
        plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "the UI's files are read with GET",
        )
    };
    let headers = response.headers_mut();
    headers.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    if !headers.contains_key("referrer-policy") {
        headers.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    }
    headers.insert("x-frame-options", HeaderValue::from_static("DENY"));
    response
}

/// The page a pairing link opens, saying what it pairs the browser as; an unknown, used or
/// expired code is counted as a wrong one (the page would otherwise tell a guesser which codes
/// are live, without the pause the confirmation's wrong codes bring).
async fn pairing_page_for(
    server: &Arc<Server>,
    request: &Request<Incoming>,
    code: &str,
) -> Response<Body> {
    let client = match pairing_client(server, request) {
        Ok(client) => client,
        Err(wait) => return paused(wait),
    };
    let devices = server.devices.clone();
    let asked = code.to_string();
    let scope = blocking(move || Ok(devices.scope_of_code(&asked)))
        .await
        .ok()
        .flatten();
    match scope {
        Some(scope) => pairing_page(code, scope),
        None => {
            server.pairing.failed(client);
            // A person's browser is told in words; any other client as the confirmation's
            // refusal says it.
            match header_str(request, header::ACCEPT).is_some_and(|a| a.contains("text/html")) {
                true => plain(
                    StatusCode::FORBIDDEN,
                    "This pairing link is unknown, used already or expired. On the machine \
                     that serves, run: baton serve pair (it prints a new link and QR code).",
                ),
                false => error_response(&crate::devices::unknown_code()),
            }
        }
    }
}

/// The page a pairing link for `scope` opens: one button that posts the code back. Nothing is
/// paired by opening it, so whatever fetches a link to show its preview does not use it up.
fn pairing_page(code: &str, scope: crate::devices::Scope) -> Response<Body> {
    let what = match scope {
        crate::devices::Scope::Lead => {
            "the lead: it may do all the lead does (approve, merge, answer, start and stop the \
             team)"
        }
        crate::devices::Scope::Responder => {
            "a responder: it reads everything, answers agents' questions and approvals, \
             comments on reviews and sends messages, and may not merge or change the tasks or the \
             team"
        }
    };
    // The code goes into the form's action: only the characters a code is made of.
    let code: String = code
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(64)
        .collect();
    let page = format!(
        r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Pair this browser with Baton</title>
<link rel="icon" href="/icon.svg" type="image/svg+xml">
<style>
body {{ font: 16px/1.5 system-ui, sans-serif; max-width: 30rem; margin: 3rem auto; padding: 0 1rem; }}
button {{ font: inherit; padding: .6rem 1.2rem; border-radius: .4rem; border: 0;
  background: #2563eb; color: #fff; cursor: pointer; }}
button:focus-visible {{ outline: 3px solid #93c5fd; outline-offset: 2px; }}
</style></head>
<body><main>
<h1>Pair this browser with Baton?</h1>
<p>This browser will reach the project as {what}, until the lead revokes it with
<code>baton serve revoke</code>. The link pairs one browser, once, within ten
minutes of <code>baton serve pair</code> printing it.</p>
<p>If you did not ask for this link yourself, close this page.</p>
<form method="post" action="/pair/{code}"><button type="submit" data-testid="pair-confirm">Pair this browser</button></form>
</main></body></html>
"#
    );
    let mut response = Response::new(full(page));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        "content-security-policy",
        HeaderValue::from_static(
            "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; form-action 'self'; \
             frame-ancestors 'none'",
        ),
    );
    // The form's post carries this page's origin (under `no-referrer` a browser sends
    // `Origin: null`, which the guard refuses); the code stays out of other sites' logs.
    headers.insert("referrer-policy", HeaderValue::from_static("same-origin"));
    response
}

/// The address a request came from (the connection's peer).
#[derive(Debug, Clone, Copy)]
pub struct Client(pub std::net::IpAddr);

async fn pair(server: &Arc<Server>, request: &Request<Incoming>, code: String) -> Response<Body> {
    let client = match pairing_client(server, request) {
        Ok(client) => client,
        Err(wait) => return paused(wait),
    };
    let name = header_str(request, header::USER_AGENT)
        .unwrap_or("a browser")
        .to_string();
    let devices = server.devices.clone();
    let paired = blocking(move || devices.pair(&code, &name)).await;
    match paired {
        Ok((device, token)) => {
            eprintln!(
                "baton serve: paired device {} as {}",
                device.id,
                device.scope.as_str()
            );
            let cookie = format!(
                "{COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/; Max-Age=31536000{}",
                if server.secure { "; Secure" } else { "" }
            );
            let mut response = plain(StatusCode::SEE_OTHER, "paired; on to the app");
            let headers = response.headers_mut();
            headers.insert(header::LOCATION, HeaderValue::from_static("/"));
            if let Ok(cookie) = HeaderValue::from_str(&cookie) {
                headers.insert(header::SET_COOKIE, cookie);
            }
            headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            response
        }
        Err(error) => {
            if error.kind() == ErrorKind::PairingRefused {
                server.pairing.failed(client);
            }
            error_response(&error)
        }
    }
}

/// The client a pairing request came from, whose wrong codes are counted (one client's do
/// not pause another's pairing); how long it waits instead while its pairing is paused.
fn pairing_client(
    server: &Server,
    request: &Request<Incoming>,
) -> Result<std::net::IpAddr, std::time::Duration> {
    let client = request
        .extensions()
        .get::<Client>()
        .map_or(std::net::IpAddr::from([0, 0, 0, 0]), |c| c.0);
    server.pairing.check(client)?;
    Ok(client)
}

/// The answer while a client's pairing is paused after too many wrong codes: for `wait`.
fn paused(wait: std::time::Duration) -> Response<Body> {
    let seconds = wait.as_secs() + 1;
    let error = Error::new(
        ErrorKind::TooManyAttempts,
        format!("too many wrong pairing codes: pairing is paused for {seconds} s"),
    );
    let mut response = error_response(&error);
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    response
}

async fn api_request(
    server: Arc<Server>,
    request: Request<Incoming>,
    api: String,
) -> Response<Body> {
    let Some(token) = token_of(&request) else {
        return error_response(&not_paired());
    };
    let devices = server.devices.clone();
    let checked = token.clone();
    let device = blocking(move || Ok(devices.device_of(&checked)))
        .await
        .ok()
        .flatten();
    let Some(device) = device else {
        return error_response(&not_paired());
    };
    match (request.method().clone(), api.as_str()) {
        (Method::GET, "feed") if crate::socket::wants_socket(&request) => {
            match crate::socket::open(request, &server.events, &server.paired, &token) {
                Ok(accept) => {
                    let mut response = Response::new(full(Bytes::new()));
                    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
                    let headers = response.headers_mut();
                    headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
                    headers.insert(header::CONNECTION, HeaderValue::from_static("Upgrade"));
                    headers.insert(header::SEC_WEBSOCKET_ACCEPT, accept);
                    response
                }
                Err(error) => error_response(&error),
            }
        }
        (Method::GET, "feed") => {
            let stream = crate::feed::stream(&server.events, &server.paired, &token);
            let mut response = Response::new(BoxBody::new(stream));
            let headers = response.headers_mut();
            headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/event-stream"),
            );
            headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            response
        }
        (Method::POST, api) if api.starts_with("operation/") || api.starts_with("command/") => {
            let body = match read_json(request).await {
                Ok(body) => body,
                Err(error) => return error_response(&error),
            };
            let outcome = match api.split_once('/') {
                Some(("operation", name)) => operation(&server, device, name, body)
                    .await
                    .map(|json| String::from(Box::<str>::from(json))),
                Some((_, name)) => command(&server, device, name, body)
                    .await
                    .map(|value| value.to_string()),
                None => unreachable!("split above"),
            };
            match outcome {
                Ok(json) => json_response(StatusCode::OK, json),
                Err(error) => error_response(&error),
            }
        }
        _ => error_response(&Error::new(
            ErrorKind::UnknownTool,
            format!("no API path {api:?} (POST operation/NAME, POST command/NAME, GET feed)"),
        )),
    }
}

async fn read_json(request: Request<Incoming>) -> Result<Value, Error> {
    let bytes = Limited::new(request.into_body(), MAX_BODY)
        .collect()
        .await
        .map_err(|e| {
            Error::new(
                ErrorKind::InvalidArguments,
                format!("cannot read the body: {e}"),
            )
        })?
        .to_bytes();
    if bytes.is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    serde_json::from_slice(&bytes).map_err(|e| {
        Error::new(
            ErrorKind::InvalidArguments,
            format!("the body is not JSON: {e}"),
        )
    })
}

/// The catalogue's operation `name`, if `device` may call it, on a blocking thread.
async fn operation(
    server: &Arc<Server>,
    device: Device,
    name: &str,
    request: Value,
) -> Result<Box<serde_json::value::RawValue>, Error> {
    let entry = baton_api::find(name)
        .ok_or_else(|| Error::new(ErrorKind::UnknownTool, format!("no operation {name:?}")))?;
    let project = server.project.clone();
    blocking(move || {
        crate::scope::check(&device, &entry, &request, &project)?;
        // A device is not the user at their desk: paths stay inside the project.
        let confinement = Confinement::project(project.local().project_dir())?;
        entry.call_json(&project.window_context(&confinement), request)
    })
    .await
}

/// Runs store work (which blocks, and may wait) off the server's thread.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, Error> + Send + 'static,
) -> Result<T, Error> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?
}

/// What the desktop's own commands read, by the same names.
async fn command(
    server: &Arc<Server>,
    device: Device,
    name: &str,
    request: Value,
) -> Result<Value, Error> {
    if let Some(asked) = name.strip_prefix("push_") {
        let (pusher, devices) = (server.pusher.clone(), server.devices.clone());
        let asked = asked.to_string();
        return blocking(move || {
            crate::push::command(pusher.as_deref(), &devices, &device, &asked, request)
        })
        .await;
    }
    let project = server.project.clone();
    let name = name.to_string();
    blocking(move || -> Result<Value, Error> {
        let text = |field: &str| {
            request
                .get(field)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        Ok(match name.as_str() {
            "whoami" => {
                serde_json::json!({"id": device.id, "scope": device.scope, "name": device.name})
            }
            "project_info" => serde_json::to_value(project.info()).expect("serialises"),
            "board" => {
                // A device is not the user at their desk: as `operation` confines it.
                let confinement = Confinement::project(project.local().project_dir())?;
                let all = request.get("all").and_then(Value::as_bool).unwrap_or(false);
                let known = request.get("known").and_then(Value::as_u64);
                serde_json::to_value(project.board(&confinement, all, known)?).expect("serialises")
            }
            "master_plan" => Value::String(project.tasks.notes()?.master_plan),
            "discoveries" => Value::String(project.tasks.notes()?.discoveries),
            "task_result" => Value::String(project.tasks.result_report(&text("task"))?),
            "handoff_graph" => {
                let orchestrator = baton_agents::Orchestrator::open_on(
                    project.local(),
                    project.documents.clone(),
                )?;
                serde_json::to_value(baton_agents::graph::HandoffGraph::build(
                    &orchestrator.state()?,
                ))
                .expect("serialises")
            }
            "recent_projects" | "browser_list" => Value::Array(Vec::new()),
            "initial_view" | "browser_session" | "board_painted" | "board_updated"
            | "timing_mark" => Value::Null,
            other => {
                return Err(Error::new(
                    ErrorKind::UnknownTool,
                    format!(
                        "{other:?} is the desktop app's own (opening projects, the browser \
                         controls): not served"
                    ),
                ));
            }
        })
    })
    .await
}

/// A file of the UI's build; gzipped when it is text and the browser takes gzip.
fn file(server: &Server, path: &str, gzip: bool) -> Response<Body> {
    let Some(source) = &server.ui else {
        return plain(
            StatusCode::NOT_FOUND,
            "the UI's build is not here: this baton was built without it; build it (`npm run \
             build` in ui/) and give --ui-dir ui/dist",
        );
    };
    let Some(found) = source.find(path) else {
        return plain(StatusCode::NOT_FOUND, "no such file");
    };
    let compressed = gzip && crate::gzip::compressible(&found.name);
    let read = match (&found.bytes, compressed) {
        (UiBytes::Built(name, bytes), true) => server.gzipped.of_built(name, bytes),
        (UiBytes::Built(_, bytes), false) => Ok(Bytes::from_static(bytes)),
        (UiBytes::File(file), true) => server.gzipped.of(file),
        (UiBytes::File(file), false) => std::fs::read(file).map(Bytes::from),
    };
    match read {
        Ok(bytes) => {
            let mut response = Response::new(full(bytes));
            let headers = response.headers_mut();
            if compressed {
                headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
            }
            headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
            headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static(crate::ui::content_type(&found.name)),
            );
            // Built files carry a hash in their names; the index does not.
            let cache = if found.name.ends_with("index.html") {
                "no-cache"
            } else {
                "public, max-age=31536000, immutable"
            };
            headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
            headers.insert(
                "content-security-policy",
                HeaderValue::from_static(
                    "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; \
                     connect-src 'self'; frame-ancestors 'none'",
                ),
            );
            response
        }
        Err(e) => plain(
            StatusCode::INTERNAL_SERVER_ERROR,
            &format!("cannot read it: {e}"),
        ),
    }
}
