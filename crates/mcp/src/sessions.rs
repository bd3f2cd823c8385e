//! The HTTP transport's sessions, bounded: rmcp's [`LocalSessionManager`] keeps every session
//! a client opens until the client closes it, and a client that opens sessions and drops them
//! (or many clients) would grow the server without end. [`Bounded`] counts the live ones,
//! refuses a new one at its cap ([`SessionLimits::max`]) with an error that says so, and
//! closes those that have been idle (no request) for [`SessionLimits::idle`]; rmcp's own
//! keep-alive ends the session's worker after the same time, and [`Bounded::reclaim`] removes
//! what is left of it.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures_core::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::common::server_side_http::ServerSseMessage;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::{SessionId, SessionManager};

/// How many sessions one server holds, and how long an idle one is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionLimits {
    pub max: usize,
    pub idle: Duration,
}

impl Default for SessionLimits {
    fn default() -> SessionLimits {
        SessionLimits {
            max: 256,
            idle: Duration::from_secs(300),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum BoundedError {
    #[error(
        "this server holds {max} sessions, its limit (--http-max-sessions): close one (DELETE \
         with its Mcp-Session-Id) or wait for an idle one to be closed"
    )]
    Full { max: usize },
    #[error(transparent)]
    Session(#[from] LocalSessionManagerError),
}

/// rmcp's session manager with a cap on live sessions and idle ones closed.
pub struct Bounded {
    inner: LocalSessionManager,
    limits: SessionLimits,
    /// Each live session and when a request last reached it.
    seen: Mutex<HashMap<SessionId, Instant>>,
    /// Sessions closed since memory was last given back (by a client, by rmcp when one ended
    /// idle, or here).
    closed: AtomicUsize,
}

impl Bounded {
    pub fn new(limits: SessionLimits) -> Bounded {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = Some(limits.idle);
        Bounded {
            inner,
            limits,
            seen: Mutex::new(HashMap::new()),
            closed: AtomicUsize::new(0),
        }
    }

    /// How many sessions are live.
    pub fn live(&self) -> usize {
        self.seen.lock().expect("sessions lock").len()
    }

    /// Room for one more session: at the cap, the idle ones are closed first, and if none
    /// was, [`BoundedError::Full`].
    pub async fn make_room(&self) -> Result<(), BoundedError> {
        if self.live() >= self.limits.max && self.reclaim().await == 0 {
            return Err(BoundedError::Full {
                max: self.limits.max,
            });
        }
        Ok(())
    }

    /// Closes every session idle for longer than the limit, and gives what closed sessions
    /// held back to the system; returns how many it closed.
    pub async fn reclaim(&self) -> usize {
        let idle: Vec<SessionId> = {
            let seen = self.seen.lock().expect("sessions lock");
            seen.iter()
                .filter(|(_, last)| last.elapsed() >= self.limits.idle)
                .map(|(id, _)| id.clone())
                .collect()
        };
        for id in &idle {
            let _ = self.close_session(id).await;
        }
        if self.closed.swap(0, Ordering::Relaxed) > 0 {
            give_back_memory();
        }
        idle.len()
    }

    fn touch(&self, id: &SessionId) {
        if let Some(last) = self.seen.lock().expect("sessions lock").get_mut(id) {
            *last = Instant::now();
        }
    }
}

/// Returns the memory closed sessions freed to the system: glibc's allocator keeps freed
/// memory in its arenas otherwise, and a server that once held thousands of sessions would
/// keep their size for ever.
fn give_back_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory at the top of the heap and of each arena.
    unsafe {
        libc::malloc_trim(0);
    }
}

impl SessionManager for Bounded {
    type Error = BoundedError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), BoundedError> {
        self.make_room().await?;
        let (id, transport) = self.inner.create_session().await?;
        self.seen
            .lock()
            .expect("sessions lock")
            .insert(id.clone(), Instant::now());
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, BoundedError> {
        self.touch(id);
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, BoundedError> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), BoundedError> {
        if self
            .seen
            .lock()
            .expect("sessions lock")
            .remove(id)
            .is_some()
        {
            self.closed.fetch_add(1, Ordering::Relaxed);
        }
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, BoundedError> {
        self.touch(id);
        Ok(self.inner.create_stream(id, message).await?)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), BoundedError> {
        self.touch(id);
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, BoundedError> {
        self.touch(id);
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, BoundedError> {
        self.touch(id);
        Ok(self.inner.resume(id, last_event_id).await?)
    }
}
