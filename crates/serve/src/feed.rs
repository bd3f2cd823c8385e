//! The project's change feed pushed to pages as server-sent events: one feed per server (the
//! folder's watch or the database's notifications, as the desktop has), fanned out to every
//! open page. A page's stream also ends when its device is revoked, within [`RECHECK`].

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use baton_api::OpenProject;
use bytes::Bytes;
use hyper::body::Frame;
use tokio::sync::{broadcast, mpsc};

use crate::devices::Devices;

/// How often an open stream checks that its device is still paired.
pub const RECHECK: Duration = Duration::from_millis(250);
/// A comment line this often keeps proxies from closing a quiet stream.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// The feed's events, each as its JSON text, for every page that listens.
pub fn start(project: &OpenProject) -> Result<broadcast::Sender<Arc<str>>, baton_api::Error> {
    let feed = project
        .feed(baton_live::WatchMode::default())
        .map_err(|e| {
            baton_api::Error::new(
                baton_core::ErrorKind::Watch,
                format!("cannot watch the project: {e}"),
            )
        })?;
    let (tx, _) = broadcast::channel(256);
    let sender = tx.clone();
    std::thread::Builder::new()
        .name("baton-serve-feed".into())
        .spawn(move || {
            while let Some(event) = feed.recv() {
                let json: Arc<str> = serde_json::to_string(&event)
                    .expect("a change event serialises")
                    .into();
                // No page listening is not an error.
                let _ = sender.send(json);
            }
        })
        .map_err(|e| {
            baton_api::Error::new(
                baton_core::ErrorKind::Io,
                format!("cannot start the feed's thread: {e}"),
            )
        })?;
    Ok(tx)
}

/// A stream body fed by a channel.
pub struct EventStream {
    rx: mpsc::Receiver<Bytes>,
}

impl hyper::body::Body for EventStream {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.rx
            .poll_recv(cx)
            .map(|chunk| chunk.map(|c| Ok(Frame::data(c))))
    }
}

/// A page's stream: the feed's events as `data:` lines, until the page goes away or the device
/// whose `token` opened it is revoked.
pub fn stream(
    events: &broadcast::Sender<Arc<str>>,
    devices: Devices,
    token: String,
) -> EventStream {
    let (tx, rx) = mpsc::channel(64);
    let mut events = events.subscribe();
    tokio::spawn(async move {
        // A first line at once, so the page knows it is connected.
        if tx
            .send(Bytes::from_static(b": connected\n\n"))
            .await
            .is_err()
        {
            return;
        }
        let mut recheck = tokio::time::interval(RECHECK);
        let mut keep_alive = tokio::time::interval(KEEP_ALIVE);
        loop {
            let chunk = tokio::select! {
                event = events.recv() => match event {
                    Ok(json) => Bytes::from(format!("data: {json}\n\n")),
                    // Too slow to keep up: the page reloads what it shows.
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        Bytes::from_static(b"event: lagged\ndata: {}\n\n")
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                },
                _ = recheck.tick() => {
                    let devices = devices.clone();
                    let token = token.clone();
                    let paired = tokio::task::spawn_blocking(move || devices.device_of(&token).is_some())
                        .await
                        .unwrap_or(false);
                    if !paired {
                        let _ = tx.send(Bytes::from_static(b"event: revoked\ndata: {}\n\n")).await;
                        return;
                    }
                    continue;
                }
                _ = keep_alive.tick() => Bytes::from_static(b": keep-alive\n\n"),
            };
            if tx.send(chunk).await.is_err() {
                return; // the page went away
            }
        }
    });
    EventStream { rx }
}
