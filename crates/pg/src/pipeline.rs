//! Requests sent together: what a transaction sends before a statement (its `BEGIN`, the
//! check of its project, the writes it queued), sent with the statement before any answer is
//! read (pipelined, through `client::Client::pipeline`), each still answered
//! on its own and in order. Kept apart from `connection`, which decides what goes together;
//! this module sends it and sorts out whose failure an answer is.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Row, Statement};

use crate::error::Failure;
use crate::plan_functions::Kept;

/// A statement's parameters, each with the type the server is told it has.
pub(crate) type Typed<'p> = Vec<(&'p (dyn ToSql + Sync), Type)>;

/// A parameter of a queued write, owned: it is sent after the call that queued it returns.
pub(crate) type Owned = Box<dyn ToSql + Sync + Send>;

/// A write whose answer nothing waits for, sent with what the transaction sends next (its
/// next statement or its `COMMIT`): see `connection::Tx::queue`.
pub(crate) struct Queued {
    pub(crate) statement: Call,
    pub(crate) params: Vec<Owned>,
}

/// How a queued write is sent: unnamed with its parameters' declared types (pooled), or as a
/// statement prepared on the connection.
pub(crate) enum Call {
    Unnamed(&'static str, Vec<Type>),
    Prepared(Statement),
}

impl Queued {
    pub(crate) async fn send(
        &self,
        client: &AsyncClient,
    ) -> std::result::Result<(), tokio_postgres::Error> {
        let params = self.params.iter().map(|p| &**p as &(dyn ToSql + Sync));
        match &self.statement {
            Call::Unnamed(sql, types) => {
                let typed: Vec<_> = params.zip(types.iter().cloned()).collect();
                client.execute_typed(sql, &typed).await?;
            }
            Call::Prepared(statement) => {
                client
                    .execute(statement, &params.collect::<Vec<_>>())
                    .await?;
            }
        }
        Ok(())
    }
}

/// The asynchronous client under the blocking one: requests sent together are made on it.
pub(crate) use crate::client::AsyncClient;

/// A kept statement as a transaction sends it (see `connection::Tx::kept_call`).
pub(crate) enum KeptCall<'p> {
    Unnamed(&'static str, Typed<'p>),
    Prepared(Statement, &'p [&'p (dyn ToSql + Sync)]),
}

impl KeptCall<'_> {
    pub(crate) async fn rows(
        &self,
        client: &AsyncClient,
    ) -> std::result::Result<Vec<Row>, tokio_postgres::Error> {
        match self {
            KeptCall::Unnamed(sql, typed) => client.query_typed(sql, typed).await,
            KeptCall::Prepared(statement, params) => client.query(statement, params).await,
        }
    }
}

/// A kept statement's failure: its function missing (to be made, and the operation run
/// again), or the database's.
pub(crate) fn kept_failure(kept: &'static Kept, e: tokio_postgres::Error) -> Failure {
    match kept.is_missing(&e) {
        true => Failure::KeptMissing(kept, e),
        false => Failure::Database(e),
    }
}

/// What failed of requests sent together: one that went before the request, or the request.
pub(crate) enum Ahead {
    Before(tokio_postgres::Error),
    Request(tokio_postgres::Error),
}

/// A request of the asynchronous client, its answer kept elsewhere.
type Request<'c> =
    Pin<Box<dyn Future<Output = std::result::Result<(), tokio_postgres::Error>> + 'c>>;

/// What goes before a request: a `BEGIN`, the check of a project, queued writes.
#[derive(Clone, Copy)]
pub(crate) struct Sent<'s> {
    pub(crate) begin: bool,
    pub(crate) check: Option<&'s str>,
    pub(crate) queued: &'s [Queued],
}

/// The question a first request asks with it: the schema's version, and whether the project
/// is there.
const CHECK: &str = "SELECT (SELECT version FROM baton_schema),
                                       EXISTS (SELECT 1 FROM baton_projects WHERE name = $1)";

/// Whether [`CHECK`]'s answer says the schema is this build's and the project there. Any
/// failure (no schema yet) says no.
fn found(answer: std::result::Result<Row, tokio_postgres::Error>) -> bool {
    answer.is_ok_and(|row| {
        row.get::<_, Option<i32>>(0) == Some(crate::schema::VERSION) && row.get::<_, bool>(1)
    })
}

/// [`CHECK`] for `project` in a round trip of its own: whether the schema is this build's and
/// the project there.
pub(crate) fn project_found(client: &mut crate::client::Client, project: &str) -> bool {
    let answer = client.query_typed(CHECK, &[(&project, Type::TEXT)]);
    answer.is_ok_and(|rows| rows.len() == 1 && found(Ok(rows.into_iter().next().expect("one row"))))
}

impl Sent<'_> {
    /// `request`, sent after what goes before it, all before any answer is read: whether the
    /// project was found (when checked), and the request's answer or the first failure
    /// among what went before it.
    pub(crate) async fn with<T>(
        self,
        client: &AsyncClient,
        request: impl Future<Output = std::result::Result<T, tokio_postgres::Error>>,
    ) -> (Option<bool>, std::result::Result<T, Ahead>) {
        let mut checked = None;
        let mut answer = None;
        let before = {
            let mut all: Vec<Request<'_>> = Vec::new();
            if self.begin {
                all.push(Box::pin(client.batch_execute("BEGIN")));
            }
            if let Some(project) = self.check {
                let checked = &mut checked;
                all.push(Box::pin(async move {
                    let answer = client
                        .query_typed_one(CHECK, &[(&project, Type::TEXT)])
                        .await;
                    *checked = Some(found(answer));
                    Ok(())
                }));
            }
            for write in self.queued {
                all.push(Box::pin(write.send(client)));
            }
            let answer = &mut answer;
            all.push(Box::pin(async move {
                *answer = Some(request.await);
                Ok(())
            }));
            in_order(all).await
        };
        let answer = match (before, answer) {
            (Err(e), _) => Err(Ahead::Before(e)),
            (Ok(()), Some(answer)) => answer.map_err(Ahead::Request),
            (Ok(()), None) => unreachable!("every request is answered"),
        };
        (checked, answer)
    }
}

/// Runs `requests` to completion, polling them first to last each time: a request of the
/// asynchronous client is sent when its future is first polled, so they go out in this
/// order. The first failure, in that order, is the result.
async fn in_order(
    mut requests: Vec<Request<'_>>,
) -> std::result::Result<(), tokio_postgres::Error> {
    let mut results: Vec<Option<std::result::Result<(), tokio_postgres::Error>>> =
        requests.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (request, result) in requests.iter_mut().zip(results.iter_mut()) {
            if result.is_none() {
                match request.as_mut().poll(cx) {
                    Poll::Ready(out) => *result = Some(out),
                    Poll::Pending => pending = true,
                }
            }
        }
        match pending {
            true => Poll::Pending,
            false => Poll::Ready(()),
        }
    })
    .await;
    results.into_iter().flatten().collect()
}
