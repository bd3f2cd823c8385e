//! The store's client to PostgreSQL: tokio-postgres's asynchronous client, used from Baton's
//! blocking code on a current-thread runtime of its own. While a request is awaited, the same
//! thread polls the connection, so a request, its answer and any notification come and go
//! without a second thread, and notifications received meanwhile are kept for
//! [`Client::next_notification`].
//!
//! Requests a future makes concurrently over the asynchronous client go out together, before
//! any answer is read (tokio-postgres pipelines them): [`Client::pipeline`] is what lets a
//! transaction's `BEGIN` ride with its first statement and its last writes with its `COMMIT`
//! (`connection.rs`). It is the one thing the blocking `postgres` crate does not offer, and the
//! reason this client exists instead of that crate.

use std::collections::VecDeque;
use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::task::Poll;
use std::time::Duration;

use futures_util::Stream;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::runtime::Runtime;
use tokio_postgres::tls::{MakeTlsConnect, TlsConnect};
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{AsyncMessage, Config, Error, Notification, Row, Socket};

/// The asynchronous client underneath, which [`Client::pipeline`]'s futures use.
pub(crate) type AsyncClient = tokio_postgres::Client;

/// A connection's messages that are not answers: notifications and notices.
type Messages = Pin<Box<dyn Stream<Item = Result<AsyncMessage, Error>> + Send>>;

/// How long a client being dropped waits for its connection to say goodbye to the server.
const CLOSE_WITHIN: Duration = Duration::from_secs(1);

/// A connection to PostgreSQL, used from blocking code.
pub(crate) struct Client {
    runtime: Runtime,
    /// `None` only while the client is dropped (its connection then closes).
    client: Option<AsyncClient>,
    connection: Messages,
    notifications: VecDeque<Notification>,
}

/// The connection's messages as a stream.
struct ConnectionMessages<S, T>(tokio_postgres::Connection<S, T>);

impl<S, T> Stream for ConnectionMessages<S, T>
where
    S: AsyncRead + AsyncWrite + Unpin,
    T: AsyncRead + AsyncWrite + Unpin,
{
    type Item = Result<AsyncMessage, Error>;

    fn poll_next(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> Poll<Option<Self::Item>> {
        self.0.poll_message(cx)
    }
}

/// Reads what `connection` has received so far: notifications are kept in `notifications`;
/// true once the connection has ended. A connection that failed is the error.
fn read_messages(
    connection: &mut Messages,
    notifications: &mut VecDeque<Notification>,
    cx: &mut std::task::Context<'_>,
) -> Result<bool, Error> {
    loop {
        match connection.as_mut().poll_next(cx) {
            Poll::Ready(Some(Ok(AsyncMessage::Notification(n)))) => notifications.push_back(n),
            Poll::Ready(Some(Ok(_))) => {} // a notice: the server's remark, not an answer
            Poll::Ready(Some(Err(e))) => return Err(e),
            Poll::Ready(None) => return Ok(true),
            Poll::Pending => return Ok(false),
        }
    }
}

/// Runs `future` on `runtime`, polling `connection` with it; notifications that arrive are
/// kept in `notifications`. A connection that fails fails the future; one that ends leaves it
/// to fail by itself (its requests are answered with errors).
fn drive<T>(
    runtime: &Runtime,
    connection: &mut Messages,
    notifications: &mut VecDeque<Notification>,
    future: impl Future<Output = Result<T, Error>>,
) -> Result<T, Error> {
    let mut future = pin!(future);
    runtime.block_on(poll_fn(|cx| {
        if let Err(e) = read_messages(connection, notifications, cx) {
            return Poll::Ready(Err(e));
        }
        future.as_mut().poll(cx)
    }))
}

impl Client {
    /// Connects as `config` says, over `tls`, on `runtime` (a current-thread runtime with
    /// I/O and time, the connection's own from then on).
    pub(crate) fn connect<T>(runtime: Runtime, config: &Config, tls: T) -> Result<Client, Error>
    where
        T: MakeTlsConnect<Socket> + 'static + Send,
        T::TlsConnect: Send,
        T::Stream: Send,
        <T::TlsConnect as TlsConnect<Socket>>::Future: Send,
    {
        let (client, connection) = runtime.block_on(config.connect(tls))?;
        Ok(Client {
            runtime,
            client: Some(client),
            connection: Box::pin(ConnectionMessages(connection)),
            notifications: VecDeque::new(),
        })
    }

    /// Runs the future `request` makes over the asynchronous client, and returns its output.
    /// Requests the future makes concurrently are sent together (pipelined).
    pub(crate) fn pipeline<'a, F, T>(
        &'a mut self,
        request: impl FnOnce(&'a AsyncClient) -> F,
    ) -> Result<T, Error>
    where
        F: Future<Output = Result<T, Error>>,
    {
        let Client {
            runtime,
            client,
            connection,
            notifications,
        } = self;
        let client = client.as_ref().expect("the client lives until dropped");
        drive(runtime, connection, notifications, request(client))
    }

    /// Runs `sql`, one or more statements, with no parameters and no rows wanted.
    pub(crate) fn batch_execute(&mut self, sql: &str) -> Result<(), Error> {
        self.pipeline(|client| client.batch_execute(sql))
    }

    /// Runs `sql` with `params`; how many rows it touched.
    pub(crate) fn execute(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, Error> {
        self.pipeline(|client| client.execute(sql, params))
    }

    /// The one row `sql` answers with, if any (more than one is an error).
    pub(crate) fn query_opt(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>, Error> {
        self.pipeline(|client| client.query_opt(sql, params))
    }

    /// The rows `sql`, run unnamed with its parameters' types declared, answers with: one
    /// round trip, so behind a pooler it runs on one server session.
    pub(crate) fn query_typed(
        &mut self,
        sql: &str,
        params: &[(&(dyn ToSql + Sync), Type)],
    ) -> Result<Vec<Row>, Error> {
        self.pipeline(|client| client.query_typed(sql, params))
    }

    /// The first notification received, waiting up to `timeout` for one; `None` if none came
    /// (or the connection ended: see [`Self::is_closed`]).
    pub(crate) fn next_notification(
        &mut self,
        timeout: Duration,
    ) -> Result<Option<Notification>, Error> {
        if let Some(n) = self.notifications.pop_front() {
            return Ok(Some(n));
        }
        let Client {
            runtime,
            connection,
            notifications,
            ..
        } = self;
        let next = poll_fn(|cx| match read_messages(connection, notifications, cx) {
            Err(e) => Poll::Ready(Err(e)),
            Ok(ended) => match notifications.pop_front() {
                Some(n) => Poll::Ready(Ok(Some(n))),
                None if ended => Poll::Ready(Ok(None)),
                None => Poll::Pending,
            },
        });
        runtime.block_on(async {
            tokio::time::timeout(timeout, next)
                .await
                .unwrap_or(Ok(None))
        })
    }

    /// Whether the connection has ended: the client cannot be used any more.
    pub(crate) fn is_closed(&self) -> bool {
        self.client.as_ref().is_none_or(AsyncClient::is_closed)
    }

    /// Begins a transaction, rolled back unless committed.
    pub(crate) fn transaction(&mut self) -> Result<Transaction<'_>, Error> {
        self.batch_execute("BEGIN")?;
        Ok(Transaction {
            client: self,
            done: false,
        })
    }
}

impl Drop for Client {
    /// Says goodbye to the server (the connection sends its `Terminate` once the client is
    /// gone), for a short while at most.
    fn drop(&mut self) {
        drop(self.client.take());
        let Client {
            runtime,
            connection,
            notifications,
            ..
        } = self;
        let ended = poll_fn(|cx| match read_messages(connection, notifications, cx) {
            Ok(false) => Poll::Pending,
            Ok(true) | Err(_) => Poll::Ready(()),
        });
        runtime.block_on(async {
            let _ = tokio::time::timeout(CLOSE_WITHIN, ended).await;
        });
    }
}

/// A transaction begun by [`Client::transaction`]: its statements run one by one; it is
/// rolled back when dropped without [`Transaction::commit`].
pub(crate) struct Transaction<'a> {
    client: &'a mut Client,
    done: bool,
}

impl Transaction<'_> {
    pub(crate) fn batch_execute(&mut self, sql: &str) -> Result<(), Error> {
        self.client.batch_execute(sql)
    }

    pub(crate) fn execute(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, Error> {
        self.client.execute(sql, params)
    }

    pub(crate) fn query_opt(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>, Error> {
        self.client.query_opt(sql, params)
    }

    pub(crate) fn commit(mut self) -> Result<(), Error> {
        self.done = true;
        self.client.batch_execute("COMMIT")
    }
}

impl Drop for Transaction<'_> {
    fn drop(&mut self) {
        if !self.done && !self.client.is_closed() {
            let _ = self.client.batch_execute("ROLLBACK");
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use baton_test_support::pg::PgServer;

    use super::Client;

    fn client(server: &PgServer) -> Client {
        crate::connect::connect(server.url()).expect("connects")
    }

    #[test]
    fn a_notification_is_received_while_waiting_and_one_during_a_request_is_kept() {
        let server = PgServer::start();
        let mut listener = client(&server);
        let mut notifier = client(&server);
        listener.batch_execute("LISTEN here").unwrap();
        assert!(
            listener
                .next_notification(Duration::from_millis(50))
                .unwrap()
                .is_none(),
            "nothing sent yet: the wait ends at its timeout"
        );
        notifier.batch_execute("NOTIFY here, 'one'").unwrap();
        let started = Instant::now();
        let one = listener.next_notification(Duration::from_secs(30)).unwrap();
        assert_eq!(one.map(|n| n.payload().to_string()), Some("one".into()));
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "woken, not timed out"
        );
        // Sent while the listener is busy with a request of its own: kept for the next wait.
        notifier.batch_execute("NOTIFY here, 'two'").unwrap();
        listener.batch_execute("SELECT pg_sleep(0.2)").unwrap();
        let two = listener.next_notification(Duration::from_secs(30)).unwrap();
        assert_eq!(two.map(|n| n.payload().to_string()), Some("two".into()));
    }

    #[test]
    fn requests_made_together_are_answered_in_order_and_a_dropped_transaction_rolls_back() {
        let server = PgServer::start();
        let mut c = client(&server);
        c.batch_execute("CREATE TABLE t (x integer)").unwrap();
        let (a, b) = c
            .pipeline(|c| async move {
                let (a, b) = futures_util::future::try_join(
                    c.query_one("SELECT 1", &[]),
                    c.query_one("SELECT 2", &[]),
                )
                .await?;
                Ok((a.get::<_, i32>(0), b.get::<_, i32>(0)))
            })
            .unwrap();
        assert_eq!((a, b), (1, 2));
        {
            let mut tx = c.transaction().unwrap();
            tx.execute("INSERT INTO t VALUES ($1)", &[&7_i32]).unwrap();
        }
        let mut tx = c.transaction().unwrap();
        tx.execute("INSERT INTO t VALUES ($1)", &[&8_i32]).unwrap();
        tx.commit().unwrap();
        let rows = c.query_typed("SELECT x FROM t", &[]).unwrap();
        let xs: Vec<i32> = rows.iter().map(|r| r.get(0)).collect();
        assert_eq!(xs, [8], "the dropped transaction's row is gone");
        assert!(!c.is_closed());
    }

    #[test]
    fn a_connection_the_server_ended_is_closed_and_its_wait_returns() {
        let server = PgServer::start();
        let mut c = client(&server);
        let pid: i32 = c.query_typed("SELECT pg_backend_pid()", &[]).unwrap()[0].get(0);
        let mut admin = client(&server);
        admin
            .execute("SELECT pg_terminate_backend($1)", &[&pid])
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while !c.is_closed() && Instant::now() < deadline {
            // Each wait polls the connection, which learns that the server ended it.
            let _ = c.next_notification(Duration::from_millis(100));
        }
        assert!(c.is_closed());
        assert!(c.batch_execute("SELECT 1").is_err());
    }
}
