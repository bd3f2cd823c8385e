//! The project's change feed pushed to pages as server-sent events: one feed per server (the
//! folder's watch or the database's notifications, as the desktop has), fanned out to every
//! open page. A page's stream also ends when its device is revoked, within [`RECHECK`]: one
//! task reads the paired devices that often for every open stream ([`Paired`]).

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

/// The feed's batches (the events of one look at the project, what one command changed), each
/// as one JSON array, for every page that listens: a page reads the board again once for the
/// batch, without waiting to see whether more events follow.
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
            while let Some(batch) = feed.recv_batch() {
                let json: Arc<str> = serde_json::to_string(&batch)
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

/// The paired devices' token hashes as one task last read them (every [`RECHECK`] while any
/// stream is open), and when: a stream trusts only a reading made after it opened.
pub struct Snapshot {
    read_at: std::time::Instant,
    hashes: std::collections::HashSet<String>,
}

pub type Paired = tokio::sync::watch::Receiver<Arc<Snapshot>>;

/// Starts the task that keeps [`Paired`] up to date.
pub fn paired(devices: Devices) -> Paired {
    let read = |devices: &Devices| {
        Arc::new(Snapshot {
            read_at: std::time::Instant::now(),
            hashes: devices.token_hashes().into_iter().collect(),
        })
    };
    let (tx, rx) = tokio::sync::watch::channel(read(&devices));
    tokio::spawn(async move {
        let mut every = tokio::time::interval(RECHECK);
        loop {
            every.tick().await;
            if tx.receiver_count() == 1 {
                continue; // no stream open (the server's own receiver only)
            }
            let devices = devices.clone();
            if let Ok(now) = tokio::task::spawn_blocking(move || read(&devices)).await {
                tx.send_replace(now);
            }
        }
    });
    rx
}

/// What a page's feed carries, whichever way it reaches the page.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// A change event, as its JSON text.
    Change(Arc<str>),
    /// Events were missed (a page too slow to keep up): the page reads everything again.
    Lagged,
    /// The device was revoked: the feed ends after this.
    Revoked,
    /// Nothing happened for a while: a line that keeps proxies from closing a quiet feed.
    KeepAlive,
}

/// Follows the feed for the device whose `token` opened it: its items, until the receiver is
/// dropped (the page went away) or the device is revoked ([`Item::Revoked`] comes last).
pub fn follow(
    events: &broadcast::Sender<Arc<str>>,
    paired: &Paired,
    token: &str,
) -> mpsc::Receiver<Item> {
    let (tx, rx) = mpsc::channel(64);
    let mut events = events.subscribe();
    let mut paired = paired.clone();
    let mine = Devices::token_hash(token);
    let opened = std::time::Instant::now();
    tokio::spawn(async move {
        let mut keep_alive =
            tokio::time::interval_at(tokio::time::Instant::now() + KEEP_ALIVE, KEEP_ALIVE);
        loop {
            let item = tokio::select! {
                event = events.recv() => match event {
                    Ok(json) => Item::Change(json),
                    Err(broadcast::error::RecvError::Lagged(_)) => Item::Lagged,
                    Err(broadcast::error::RecvError::Closed) => return,
                },
                changed = paired.changed() => {
                    let revoked = changed.is_err() || {
                        let now = paired.borrow_and_update();
                        now.read_at > opened && !now.hashes.contains(&mine)
                    };
                    if !revoked {
                        continue;
                    }
                    Item::Revoked
                }
                _ = keep_alive.tick() => Item::KeepAlive,
            };
            let last = item == Item::Revoked;
            if tx.send(item).await.is_err() || last {
                return; // the page went away, or may no longer listen
            }
        }
    });
    rx
}

/// A page's feed as server-sent events (for scripts: `curl -N`): `data:` lines (each one batch,
/// a JSON array of events), an `event: lagged`, an `event: revoked` that ends it, comment lines
/// to keep it open.
pub struct EventStream {
    items: mpsc::Receiver<Item>,
    /// The first line is sent at once, so the client knows it is connected.
    greeted: bool,
}

impl hyper::body::Body for EventStream {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if !self.greeted {
            self.greeted = true;
            return Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(
                b": connected\n\n",
            )))));
        }
        self.items.poll_recv(cx).map(|item| {
            item.map(|item| {
                Ok(Frame::data(match item {
                    Item::Change(json) => Bytes::from(format!("data: {json}\n\n")),
                    Item::Lagged => Bytes::from_static(b"event: lagged\ndata: {}\n\n"),
                    Item::Revoked => Bytes::from_static(b"event: revoked\ndata: {}\n\n"),
                    Item::KeepAlive => Bytes::from_static(b": keep-alive\n\n"),
                }))
            })
        })
    }
}

/// A page's feed as server-sent events, until the page goes away or the device whose `token`
/// opened it is revoked.
pub fn stream(events: &broadcast::Sender<Arc<str>>, paired: &Paired, token: &str) -> EventStream {
    EventStream {
        items: follow(events, paired, token),
        greeted: false,
    }
}
