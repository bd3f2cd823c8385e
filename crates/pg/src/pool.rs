//! A store's connections. The first is made when the store opens; another only when an
//! operation finds every one busy and fewer than the route's pool size are open. So a `baton`
//! process that runs one operation at a time keeps one connection, and a supervisor's hundred
//! workers share a few instead of queueing every write on one (`pool=N` in the URL, 4 unless
//! told). A connection is someone's for one operation, then goes back to the idle ones.

use std::ops::{Deref, DerefMut};
use std::sync::{Condvar, Mutex, MutexGuard};

use crate::connection::Connection;

/// The store's connections: those idle now, and how many are open in all.
pub(crate) struct Pool {
    state: Mutex<State>,
    freed: Condvar,
    size: usize,
}

struct State {
    idle: Vec<Connection>,
    open: usize,
    /// The project a new connection still checks with its first request: the first
    /// connection's, until one of them has checked it.
    unchecked: Option<String>,
}

/// A connection taken for one operation; it goes back to the pool when dropped.
pub(crate) struct Taken<'a> {
    pool: &'a Pool,
    connection: Option<Connection>,
}

impl Pool {
    /// A pool of at most `size` connections (at least one), `first` the first of them.
    pub(crate) fn new(first: Connection, size: usize) -> Pool {
        Pool {
            state: Mutex::new(State {
                unchecked: first.unchecked.clone(),
                idle: vec![first],
                open: 1,
            }),
            freed: Condvar::new(),
            size: size.max(1),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A connection for one operation: an idle one; else a new one `open` makes (given the
    /// project still to check), when fewer than the pool's size are open; else the next one
    /// another operation gives back.
    pub(crate) fn take<E>(
        &self,
        open: impl FnOnce(Option<String>) -> Result<Connection, E>,
    ) -> Result<Taken<'_>, E> {
        let mut state = self.state();
        loop {
            if let Some(connection) = state.idle.pop() {
                return Ok(self.taken(connection));
            }
            if state.open < self.size {
                state.open += 1;
                let unchecked = state.unchecked.clone();
                drop(state);
                // Made outside the lock: a connection takes round trips to set up.
                return match open(unchecked) {
                    Ok(connection) => Ok(self.taken(connection)),
                    Err(e) => {
                        self.state().open -= 1;
                        self.freed.notify_one();
                        Err(e)
                    }
                };
            }
            state = self.freed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn taken(&self, connection: Connection) -> Taken<'_> {
        Taken {
            pool: self,
            connection: Some(connection),
        }
    }

    /// How many connections are open now.
    #[cfg(test)]
    pub(crate) fn open(&self) -> usize {
        self.state().open
    }

    /// The first idle connection, for setting it up before the store is used.
    pub(crate) fn with_first<T>(&self, f: impl FnOnce(&mut Connection) -> T) -> Option<T> {
        let mut state = self.state();
        let out = state.idle.first_mut().map(f);
        if let Some(first) = state.idle.first() {
            state.unchecked = first.unchecked.clone();
        }
        out
    }
}

impl Deref for Taken<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        self.connection.as_ref().expect("taken until dropped")
    }
}

impl DerefMut for Taken<'_> {
    fn deref_mut(&mut self) -> &mut Connection {
        self.connection.as_mut().expect("taken until dropped")
    }
}

impl Drop for Taken<'_> {
    fn drop(&mut self) {
        let Some(connection) = self.connection.take() else {
            return;
        };
        let mut state = self.pool.state();
        if connection.unchecked.is_none() {
            // Checked once: connections made from now on need not check again.
            state.unchecked = None;
        }
        state.idle.push(connection);
        drop(state);
        self.pool.freed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Barrier;

    use baton_core::TaskStore;
    use baton_test_support::pg::PgServer;

    use crate::PgStore;

    fn with_pool(url: &str, size: usize) -> String {
        let joint = if url.contains('?') { '&' } else { '?' };
        format!("{url}{joint}pool={size}")
    }

    #[test]
    fn one_operation_at_a_time_keeps_one_connection_and_many_at_once_share_the_pool() {
        let server = PgServer::shared();
        let url = with_pool(server.url(), 3);
        let store = PgStore::init(&url, "pool-sizes", "Goal", None).unwrap();
        for _ in 0..20 {
            store.status().unwrap();
        }
        assert_eq!(store.pool.open(), 1, "one at a time: one connection");
        // Eight threads claiming at once, each holding its operation until all have begun
        // (a claim waits on nothing, so their operations overlap).
        for i in 0..40 {
            store
                .add_task(baton_core::NewTask {
                    description: format!("Task {i}"),
                    ..baton_core::NewTask::default()
                })
                .unwrap();
        }
        let start = Barrier::new(8);
        let claimed: Vec<usize> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..8)
                .map(|w| {
                    let (store, start) = (&store, &start);
                    scope.spawn(move || {
                        start.wait();
                        let agent = format!("w{w}");
                        let mut n = 0;
                        while store
                            .claim(&baton_core::ClaimRequest::next(&agent))
                            .unwrap()
                            .is_some()
                        {
                            n += 1;
                        }
                        n
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).collect()
        });
        assert_eq!(claimed.iter().sum::<usize>(), 40, "every task claimed once");
        let open = store.pool.open();
        assert!(
            (2..=3).contains(&open),
            "more than one, at most the pool's 3: {open}"
        );
    }

    #[test]
    fn a_pool_size_out_of_range_is_refused_with_its_range() {
        let server = PgServer::shared();
        for bad in ["0", "65", "many"] {
            let url = format!(
                "{}{}pool={bad}",
                server.url(),
                if server.url().contains('?') { '&' } else { '?' }
            );
            let err = PgStore::open(&url, "anything").err().expect("refused");
            assert!(err.to_string().contains("1 to 64"), "{err}");
        }
    }
}
