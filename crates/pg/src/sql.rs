//! The SQL of the hot paths, built once per process: what makes a task claimable as a
//! condition on row `t`, the claim's best-ready query in its forms, and the one statement
//! that writes a task back with what goes with it.

use std::sync::LazyLock;

use crate::plan_functions::Kept;

/// Every dependency of row `t` is done (an unknown dependency is never done).
pub(crate) const DEPENDENCIES_DONE: &str = "NOT EXISTS (
      SELECT 1 FROM unnest(t.dependencies) AS d(id)
      LEFT JOIN baton_tasks u ON u.project = t.project AND u.id = d.id
      WHERE u.status IS DISTINCT FROM 'done')";

/// Row `t` is work, not a team's plan (which only its planner claims, by name).
macro_rules! work {
    () => {
        "NOT t.body @> '{\"kind\": \"plan\"}'"
    };
}

/// An available task of work whose dependencies are all done (the `baton_tasks_ready` index).
pub(crate) const READY: &str = concat!("t.status = 'available' AND t.waiting = 0 AND ", work!());
/// A held task whose lease ran out, by the database's clock.
pub(crate) const EXPIRED: &str =
    "t.status IN ('claimed', 'in_progress') AND t.lease_expires_at <= statement_timestamp()";

/// A held task a claim could take now: its lease ran out and its dependencies are done.
pub(crate) static LAPSED: LazyLock<String> =
    LazyLock::new(|| format!("{EXPIRED} AND {DEPENDENCIES_DONE} AND {}", work!()));

/// A task a claim could take now: ready, or held on an expired lease with its dependencies
/// done (what the folder's `Task::is_claimable` and its dependency check say, as SQL on row
/// `t`).
pub(crate) static CLAIMABLE: LazyLock<String> =
    LazyLock::new(|| format!("(({READY}) OR ({}))", *LAPSED));

/// The order claims take tasks in (priority, then age, then board order) on row `t`: the
/// `baton_tasks_ready` index's columns after the project, so a read in this order walks it.
pub(crate) const CLAIM_ORDER: &str = "t.priority, t.created_at, t.position";

/// Whether any task of project `$1` is claimable now ([`CLAIMABLE`]), as two reads each on
/// its own index: the best ready task's row in the `baton_tasks_ready` index, and an expired
/// lease in `baton_tasks_held`. As one `EXISTS` over [`CLAIMABLE`]'s `OR`, a kept plan scanned
/// the board in the order of its rows until it met a claimable one, which late in a drain meant
/// every finished task first: 1.5 ms a look in a 3,000-task `cargo bench --bench scale`
/// (every waiting worker looks on every change), 5.3 s of the server's time in the run; as
/// two reads, under 0.9 s.
pub(crate) static ANY_CLAIMABLE: LazyLock<String> = LazyLock::new(|| {
    format!(
        "((SELECT true FROM baton_tasks t WHERE t.project = $1 AND {READY}
           ORDER BY {CLAIM_ORDER} LIMIT 1) IS NOT NULL
          OR EXISTS (SELECT 1 FROM baton_tasks t
                     WHERE t.project = $1 AND {}))",
        *LAPSED
    )
});

/// The tasks a claim could take, best first (what `worker list` shows, and what a claim
/// passing over tasks whose files are held walks through).
pub(crate) static READY_TASKS: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT body FROM baton_tasks t WHERE t.project = $1 AND {}
         ORDER BY {CLAIM_ORDER}",
        *CLAIMABLE
    )
});

/// The best ready task, locked, skipping rows other claims hold: the best available one (read
/// in the order of the `baton_tasks_ready` index, so a large board, however many of its tasks
/// are blocked, costs no more than a small one) and the best one held on an expired lease,
/// whichever sorts first. Both are locked until the transaction ends; the one not taken is
/// free again a moment later. Built once per process: claims are the hot path; through a
/// pooler, run as a function that keeps its plan (`plan_functions`).
pub(crate) static BEST_READY: LazyLock<Kept> = LazyLock::new(|| {
    Kept::new(
        best_ready("", false),
        &["text", "text"],
        &["jsonb", "timestamptz"],
    )
});

/// [`BEST_READY`] that also tries the chosen task's file lock keys (its `keys` exclusively,
/// the rest of its `reach` shared; see `reservations`) in the same round trip: the third
/// column says whether all were taken, NULL when the row has none recorded.
pub(crate) static BEST_READY_KEYED: LazyLock<Kept> = LazyLock::new(|| {
    Kept::new(
        best_ready("", true),
        &["text", "text"],
        &["jsonb", "timestamptz", "boolean"],
    )
});

/// [`BEST_READY_KEYED`] but for the tasks in `$3` (passed over already).
pub(crate) static BEST_READY_BUT_KEYED: LazyLock<Kept> = LazyLock::new(|| {
    Kept::new(
        best_ready("t.id <> ALL($3) AND ", true),
        &["text", "text", "text[]"],
        &["jsonb", "timestamptz", "boolean"],
    )
});

/// A task sent back for changes to the worker `$2`, within its lease (the folder's
/// `Task::is_sent_back_to`; the `baton_tasks_sent_back` index's predicate).
pub(crate) const SENT_BACK: &str = "t.claimed_by = $2 AND t.status = 'claimed' \
     AND t.body @> '{\"sent_back\": true}' AND t.lease_expires_at > statement_timestamp()";

fn best_ready(extra: &str, keyed: bool) -> String {
    let candidate = |condition: &str| {
        format!(
            "SELECT t.id, t.priority, t.created_at, t.position, t.body, t.keys, t.reach
             FROM baton_tasks t
             WHERE t.project = $1 AND {extra}{condition}
             ORDER BY {CLAIM_ORDER}
             LIMIT 1 FOR UPDATE SKIP LOCKED"
        )
    };
    let keys = if keyed {
        ", CASE WHEN best.keys IS NULL THEN NULL ELSE (
             SELECT coalesce(bool_and(taken), true) FROM (
                 SELECT pg_try_advisory_xact_lock(hashtext('baton:' || $1 || ':' || k)) AS taken
                 FROM unnest(best.keys) AS k
                 UNION ALL
                 SELECT pg_try_advisory_xact_lock_shared(hashtext('baton:' || $1 || ':' || k))
                 FROM unnest(best.reach) AS k WHERE NOT k = ANY(best.keys)) AS tried) END"
    } else {
        ""
    };
    // A task sent back to the claiming worker comes before any other (`$2`).
    format!(
        "WITH mine AS ({}), available AS ({}), expired AS ({}),
         best AS (SELECT * FROM mine UNION ALL
                  (SELECT * FROM (SELECT * FROM available UNION ALL SELECT * FROM expired) AS c
                   ORDER BY c.priority, c.created_at, c.position LIMIT 1)
                  LIMIT 1)
         SELECT best.body, statement_timestamp(){keys} FROM best",
        candidate(SENT_BACK),
        candidate(READY),
        candidate(&LAPSED)
    )
}

/// The channel waiting claims listen on: a task may have become ready. The payload is the
/// project's name.
pub(crate) const CHANNEL: &str = "baton_tasks";
/// The channel watchers listen on: anything of the project changed (payload: its name).
pub(crate) const CHANGES: &str = "baton_changes";

/// The statement [`save`] runs, for what goes with the row (the parameters after the row's
/// ten: the agent and its time, then the log line's time, agent and text). Each of the
/// eight forms is built once per process.
pub(crate) fn save_sql(seen: bool, logged: bool, wake: bool) -> &'static str {
    static FORMS: LazyLock<Vec<String>> = LazyLock::new(|| {
        (0..8)
            .map(|bits| build_save_sql(bits & 1 != 0, bits & 2 != 0, bits & 4 != 0))
            .collect()
    });
    &FORMS[usize::from(seen) | usize::from(logged) << 1 | usize::from(wake) << 2]
}

fn build_save_sql(seen: bool, logged: bool, wake: bool) -> String {
    let mut parts = vec![
        "saved AS (UPDATE baton_tasks
             SET status = $3, priority = $4, claimed_by = $5, lease_expires_at = $6,
                 dependencies = $7, body = $8, keys = $9, reach = $10
             WHERE project = $1 AND id = $2)"
            .to_string(),
    ];
    let mut next = 11;
    if seen {
        parts.push(format!(
            "seen AS (INSERT INTO baton_agents (project, name, last_seen) VALUES ($1, ${}, ${})
             ON CONFLICT (project, name) DO UPDATE SET last_seen = EXCLUDED.last_seen)",
            next,
            next + 1
        ));
        next += 2;
    }
    let mut notices = Vec::new();
    if logged {
        parts.push(format!(
            "logged AS (INSERT INTO baton_log (project, at, agent, line) VALUES ($1, ${}, ${}, ${}))",
            next,
            next + 1,
            next + 2
        ));
        notices.push(format!("pg_notify('{CHANGES}', $1)"));
    }
    if wake {
        notices.push(format!("pg_notify('{CHANNEL}', $1)"));
    }
    if notices.is_empty() {
        notices.push("1".into());
    }
    format!("WITH {} SELECT {}", parts.join(", "), notices.join(", "))
}
