//! A Unix socket an attempt's sandbox reaches (the door, the network proxy): each connection
//! served on a thread of its own, a bounded number at once, until the attempt ends.
//!
//! A sandboxed agent owns the other end, so it may open many connections and say nothing:
//! past the bound, connections are closed unanswered, and each costs the supervisor one
//! thread. Closing wakes the accepting thread even when the agent removed the socket's file.

use std::os::fd::AsRawFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;

/// A socket being served; closed when dropped.
pub struct Listening {
    /// Its path as this process reaches it.
    address: PathBuf,
    /// The listening socket, shut to wake the accepting thread.
    listening: UnixListener,
    closing: Arc<AtomicBool>,
    accepting: Option<JoinHandle<()>>,
}

impl Listening {
    /// Listens at `address` and gives each connection to `serve` on a thread named `name`, at
    /// most `max_open` at once.
    pub fn serve<F>(
        address: &Path,
        name: &str,
        max_open: usize,
        serve: F,
    ) -> std::io::Result<Listening>
    where
        F: Fn(UnixStream) + Send + Sync + 'static,
    {
        let listener = UnixListener::bind(address)?;
        let listening = listener.try_clone()?;
        let closing = Arc::new(AtomicBool::new(false));
        let accepting = {
            let closing = closing.clone();
            let name = name.to_string();
            std::thread::Builder::new()
                .name(name.clone())
                .spawn(move || accept(listener, &name, max_open, &closing, Arc::new(serve)))?
        };
        Ok(Listening {
            address: address.to_path_buf(),
            listening,
            closing,
            accepting: Some(accepting),
        })
    }

    /// Accepts no more connections (those being served go on until their `serve` returns).
    pub fn close(&mut self) {
        let Some(thread) = self.accepting.take() else {
            return;
        };
        self.closing.store(true, Ordering::SeqCst);
        // Shutting the socket ends a waiting accept on Linux; a connection does where it does
        // not.
        // SAFETY: shutdown on a socket this owns; it frees nothing.
        unsafe { libc::shutdown(self.listening.as_raw_fd(), libc::SHUT_RDWR) };
        let _ = UnixStream::connect(&self.address);
        let _ = thread.join();
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.close();
    }
}

fn accept<F>(
    listener: UnixListener,
    name: &str,
    max_open: usize,
    closing: &AtomicBool,
    serve: Arc<F>,
) where
    F: Fn(UnixStream) + Send + Sync + 'static,
{
    let open = Arc::new(AtomicUsize::new(0));
    for stream in listener.incoming() {
        if closing.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = stream else { continue };
        if open.fetch_add(1, Ordering::SeqCst) >= max_open {
            open.fetch_sub(1, Ordering::SeqCst);
            continue;
        }
        let (serve, held) = (serve.clone(), open.clone());
        let spawned = std::thread::Builder::new()
            .name(format!("{name}-conn"))
            .spawn(move || {
                serve(stream);
                held.fetch_sub(1, Ordering::SeqCst);
            });
        if spawned.is_err() {
            open.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// Where a socket named `name` in folder `dir` (open as `handle`, kept open while the socket is
/// used) is bound: its path, or through `/proc/self/fd` when the path is too long for a socket
/// address (107 bytes).
pub fn socket_address(dir: &Path, handle: &std::fs::File, name: &str) -> PathBuf {
    let real = dir.join(name);
    match real.as_os_str().len() < 100 {
        true => real,
        false => PathBuf::from(format!("/proc/self/fd/{}/{name}", handle.as_raw_fd())),
    }
}
