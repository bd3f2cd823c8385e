//! The change feed over a WebSocket, as the served UI's pages follow it.
//!
//! A page's server-sent-events stream held one of the six HTTP/1.1 connections a browser keeps
//! to a server, so the seventh tab of the app waited for ever on its first call; a WebSocket is
//! not counted among them. Messages go one way: each change event as a text message; a page
//! too slow to keep up is closed with [`LAGGED`] and a revoked device's with [`REVOKED`] (the
//! page reads everything again, or shows the pairing screen); pings keep a quiet feed open.
//! What a page sends is read only for its close, and a large message ends the connection.

use std::sync::Arc;

use baton_api::Error;
use baton_core::ErrorKind;
use futures_util::{SinkExt, StreamExt};
use hyper::Request;
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper_util::rt::TokioIo;
use tokio::sync::{broadcast, mpsc};
use tokio_tungstenite::WebSocketStream;
use tungstenite::protocol::frame::coding::CloseCode;
use tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};
use tungstenite::{Message, Utf8Bytes};

use crate::feed::{Item, Paired};

/// The close code of a feed that missed events.
pub const LAGGED: u16 = 4000;
/// The close code of a revoked device's feed.
pub const REVOKED: u16 = 4001;
/// The largest message a page may send (it has nothing to say but its close).
const MAX_MESSAGE: usize = 4096;

/// Whether `request` asks to open a WebSocket.
pub fn wants_socket(request: &Request<Incoming>) -> bool {
    request
        .headers()
        .get(header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"))
}

/// Checks the handshake and follows the feed over the socket once the connection is upgraded;
/// the `Sec-WebSocket-Accept` to answer with (101). A socket is opened by a page: it must say where it comes from (the guard has
/// already refused another site's Origin), so a script elsewhere cannot read the feed with the
/// device's cookie.
pub fn open(
    mut request: Request<Incoming>,
    events: &broadcast::Sender<Arc<str>>,
    paired: &Paired,
    token: &str,
) -> Result<HeaderValue, Error> {
    let headers = request.headers();
    if !headers.contains_key(header::ORIGIN) {
        return Err(Error::new(
            ErrorKind::NotAllowed,
            "a WebSocket must say where it comes from (an Origin header)",
        ));
    }
    if headers
        .get(header::SEC_WEBSOCKET_VERSION)
        .is_none_or(|v| v.as_bytes() != b"13")
    {
        return Err(Error::new(
            ErrorKind::InvalidArguments,
            "only WebSocket version 13 is spoken (Sec-WebSocket-Version: 13)",
        ));
    }
    let Some(key) = headers.get(header::SEC_WEBSOCKET_KEY) else {
        return Err(Error::new(
            ErrorKind::InvalidArguments,
            "a WebSocket handshake needs its Sec-WebSocket-Key",
        ));
    };
    let accept = tungstenite::handshake::derive_accept_key(key.as_bytes());
    let items = crate::feed::follow(events, paired, token);
    let upgrade = hyper::upgrade::on(&mut request);
    tokio::spawn(async move {
        let Ok(upgraded) = upgrade.await else {
            return; // the client went away before the upgrade
        };
        let config = WebSocketConfig::default()
            .max_message_size(Some(MAX_MESSAGE))
            .max_frame_size(Some(MAX_MESSAGE));
        let socket =
            WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, Some(config))
                .await;
        feed(socket, items).await;
    });
    HeaderValue::from_str(&accept)
        .map_err(|e| Error::new(ErrorKind::Internal, format!("the accept key: {e}")))
}

/// Sends the feed's items until the page closes the socket, goes away, or is revoked.
async fn feed<S>(socket: WebSocketStream<S>, mut items: mpsc::Receiver<Item>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let (mut sink, mut incoming) = socket.split();
    let close = |code: u16, reason: &'static str| {
        Message::Close(Some(CloseFrame {
            code: CloseCode::from(code),
            reason: Utf8Bytes::from_static(reason),
        }))
    };
    loop {
        let message = tokio::select! {
            item = items.recv() => match item {
                Some(Item::Change(json)) => Message::Text(Utf8Bytes::from(json.to_string())),
                Some(Item::KeepAlive) => Message::Ping(Default::default()),
                Some(Item::Lagged) => close(LAGGED, "lagged"),
                Some(Item::Revoked) => close(REVOKED, "revoked"),
                None => close(1001, "the server is going away"),
            },
            // The page's close (or its going away, or a message too large): the end.
            from_page = incoming.next() => match from_page {
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return,
                Some(Ok(_)) => continue,
            },
        };
        let last = matches!(message, Message::Close(_));
        if sink.send(message).await.is_err() || last {
            let _ = sink.close().await;
            return;
        }
    }
}
