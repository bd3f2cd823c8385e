//! File reservations: which agent holds which paths, so two agents do not edit one file at
//! once. A claimed or in-progress task holds its `context.files` for its holder; an agent can
//! reserve more (`baton reserve`). Exclusive by default; shared ones conflict only with
//! exclusive ones. Every reservation ends with its holder's lease (a dead agent's reservations
//! expire like its claims), a task's with the task (complete, fail, release, reset), and an
//! explicit one at its `--ttl` too.
//!
//! Paths and globs are project-relative and normalised here ([`normalise`]): no absolute paths,
//! no `..`, no control characters, globs checked by `globset` (`*` and `?` stay within one
//! folder, `**` crosses folders). A path names that file; written with a trailing `/` (or as
//! `DIR/**`) it names a folder and everything in it. Whether two overlap ([`overlap`]) is
//! decided both ways:
//!
//! | one | other | overlap |
//! | --- | --- | --- |
//! | `src/api/users.ts` | `src/api/users.ts` | yes: the same file |
//! | `src/api/` or `src/api` | `src/api/users.ts` | yes: the folder holds the file |
//! | `src/api/**` or `src/api/*.ts` | `src/api/users.ts` | yes: the glob matches the file |
//! | `src/**/*.rs` | `src/api/` | yes: the folder may hold files the glob matches |
//! | `src/*.ts` | `src/api/` | no: the glob matches nothing inside `src/api/` |
//! | `src/**` | `src/api/*.ts` | yes: two globs overlap when their fixed leading folders are nested (a conservative rule: `src/**/*.rs` and `src/*.ts` count too) |
//! | `src/**` | `docs/*.md` | no |
//! | `*.md` | `docs/README.md` | no: `*` does not cross folders |

use std::time::Duration;

use globset::{GlobBuilder, GlobMatcher};
use serde::{Deserialize, Serialize};

use crate::error::{Result, StoreError};
use crate::model::{Reservation, Task, TaskFile};
use crate::time::Timestamp;

/// The longest path or glob accepted, in bytes.
pub const MAX_PATTERN_BYTES: usize = 512;
/// The most paths one reservation names.
pub const MAX_PATTERNS: usize = 100;

/// Files another agent holds: who, for which task, which of its paths.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Hold {
    pub agent: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// The holder's paths that overlap the ones asked about.
    pub paths: Vec<String>,
    pub shared: bool,
}

impl Hold {
    /// `AGENT (TASK)` or `AGENT`.
    pub fn holder(&self) -> String {
        match &self.task {
            Some(task) => format!("{} ({task})", self.agent),
            None => self.agent.clone(),
        }
    }
}

/// A new reservation, as `baton reserve` and `paths_reserve` ask for it.
#[derive(Debug, Clone, Default)]
pub struct NewReservation {
    pub agent: String,
    pub paths: Vec<String>,
    pub task: Option<String>,
    pub shared: bool,
    pub ttl: Option<Duration>,
    pub reason: Option<String>,
}

/// `pattern` as the store keeps it: project-relative, `/`-separated, without `./`, empty or
/// repeated separators; a glob checked by `globset`. Refuses absolute paths, `..`, control
/// characters and over-long patterns.
pub fn normalise(pattern: &str) -> Result<String> {
    let refuse = |reason: String| StoreError::InvalidInput {
        field: "paths",
        reason: format!("{pattern:?}: {reason}"),
    };
    if pattern.len() > MAX_PATTERN_BYTES {
        return Err(refuse(format!("longer than {MAX_PATTERN_BYTES} bytes")));
    }
    if pattern.chars().any(char::is_control) {
        return Err(refuse("contains control characters".into()));
    }
    if pattern.contains('\\') {
        return Err(refuse(
            "contains a backslash; separate folders with `/`".into(),
        ));
    }
    if pattern.starts_with('/') || pattern.contains(':') {
        return Err(refuse(
            "is not inside the project; give a path relative to the project folder".into(),
        ));
    }
    let folder = pattern.ends_with('/');
    let mut parts = Vec::new();
    for part in pattern.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                return Err(refuse("leads out of the project (`..`)".into()));
            }
            part => parts.push(part),
        }
    }
    if parts.is_empty() {
        return Err(refuse("names no file".into()));
    }
    let mut normal = parts.join("/");
    if is_glob(&normal) {
        matcher(&normal).map_err(|e| refuse(format!("is not a valid glob: {e}")))?;
    } else if folder {
        normal.push('/');
    }
    Ok(normal)
}

/// Every pattern of `patterns` normalised, without repeats; at least one, at most
/// [`MAX_PATTERNS`].
pub fn normalise_all(patterns: &[String]) -> Result<Vec<String>> {
    if patterns.is_empty() {
        return Err(StoreError::InvalidInput {
            field: "paths",
            reason: "name at least one path or glob".into(),
        });
    }
    if patterns.len() > MAX_PATTERNS {
        return Err(StoreError::InvalidInput {
            field: "paths",
            reason: format!("at most {MAX_PATTERNS} paths in one reservation"),
        });
    }
    let mut out: Vec<String> = Vec::new();
    for pattern in patterns {
        let normal = normalise(pattern)?;
        if !out.contains(&normal) {
            out.push(normal);
        }
    }
    Ok(out)
}

fn is_glob(pattern: &str) -> bool {
    pattern.contains(['*', '?', '[', '{'])
}

fn matcher(glob: &str) -> std::result::Result<GlobMatcher, globset::Error> {
    Ok(GlobBuilder::new(glob)
        .literal_separator(true)
        .build()?
        .compile_matcher())
}

/// The folders before a glob's first wildcard (`src/api` of `src/api/**/*.ts`).
fn fixed_prefix(glob: &str) -> &str {
    let first = glob.find(['*', '?', '[', '{']).unwrap_or(glob.len());
    match glob[..first].rfind('/') {
        Some(slash) => &glob[..slash],
        None => "",
    }
}

/// `inner` is `outer` or lies in the folder `outer`.
fn within(inner: &str, outer: &str) -> bool {
    outer.is_empty()
        || inner == outer
        || (inner.starts_with(outer) && inner.as_bytes().get(outer.len()) == Some(&b'/'))
}

/// What a normalised pattern names.
enum Names<'a> {
    File(&'a str),
    /// A folder and everything in it (written with a trailing `/`), without the `/`.
    Folder(&'a str),
    Glob(&'a str),
}

fn names(pattern: &str) -> Names<'_> {
    if is_glob(pattern) {
        Names::Glob(pattern)
    } else if let Some(folder) = pattern.strip_suffix('/') {
        Names::Folder(folder)
    } else {
        Names::File(pattern)
    }
}

/// The key a normalised pattern stands on: the file, the folder, or a glob's fixed folders.
pub fn key_of(pattern: &str) -> &str {
    match names(pattern) {
        Names::File(x) | Names::Folder(x) => x,
        Names::Glob(g) => fixed_prefix(g),
    }
}

/// `key` and every folder above it, up to the project's root (`""`).
pub fn ancestors_of(key: &str) -> Vec<&str> {
    let mut out = vec![key];
    let mut rest = key;
    while let Some(slash) = rest.rfind('/') {
        rest = &rest[..slash];
        out.push(rest);
    }
    if !key.is_empty() {
        out.push("");
    }
    out
}

/// Lock keys for deciding on `patterns` while others decide at once: each pattern's own key
/// exclusively, the folders above it shared. Two sets of patterns that can overlap always meet
/// on some key that one of them holds exclusively (so the second waits, or passes over), and
/// two that cannot overlap may still meet (a conservative wait, never a missed conflict).
/// Sorted, so holders that wait take them in one order.
pub fn lock_keys(patterns: &[String]) -> (Vec<String>, Vec<String>) {
    let mut exclusive: Vec<String> = patterns.iter().map(|p| key_of(p).to_string()).collect();
    exclusive.sort();
    exclusive.dedup();
    let mut shared: Vec<String> = exclusive
        .iter()
        .flat_map(|k| ancestors_of(k).into_iter().skip(1).map(str::to_string))
        .filter(|k| exclusive.binary_search(k).is_err())
        .collect();
    shared.sort();
    shared.dedup();
    (exclusive, shared)
}

/// The lock keys of a task's files and every folder above them (`keys`, `reach`), as a
/// database indexes them to find the held tasks that could overlap some paths: those whose
/// `keys` meet the paths' keys and the folders above them, or whose `reach` meets the paths'
/// keys (the same meeting [`lock_keys`] makes).
pub fn task_keys(task: &Task) -> (Vec<String>, Vec<String>) {
    let (keys, shared) = lock_keys(&task_files(task));
    let mut reach: Vec<String> = keys.iter().cloned().chain(shared).collect();
    reach.sort();
    reach.dedup();
    (keys, reach)
}

/// Whether two normalised patterns can name one file (the table in the module docs).
pub fn overlap(a: &str, b: &str) -> bool {
    use Names::*;
    match (names(a), names(b)) {
        // One path below another makes the other a folder: they overlap.
        (File(x) | Folder(x), File(y) | Folder(y)) => within(x, y) || within(y, x),
        (Glob(g), File(x)) | (File(x), Glob(g)) => matches(g, x) || within(fixed_prefix(g), x),
        (Glob(g), Folder(f)) | (Folder(f), Glob(g)) => {
            let root = fixed_prefix(g);
            within(root, f) || (within(f, root) && matches(g, &format!("{f}/{}", sample(g))))
        }
        (Glob(x), Glob(y)) => {
            let (px, py) = (fixed_prefix(x), fixed_prefix(y));
            within(px, py) || within(py, px)
        }
    }
}

/// Whether changing the file `path` (a concrete path, never read as a glob) touches what the
/// normalised `pattern` names: the path is it or lies in it, or stands where a folder above it
/// is (a file `.claude` replacing the folder `.claude/`).
pub fn covers(pattern: &str, path: &str) -> bool {
    match names(pattern) {
        Names::File(x) | Names::Folder(x) => within(path, x) || within(x, path),
        Names::Glob(g) => {
            ancestors_of(path)
                .into_iter()
                .any(|p| !p.is_empty() && matches(g, p))
                || within(fixed_prefix(g), path)
        }
    }
}

fn matches(glob: &str, path: &str) -> bool {
    matcher(glob).is_ok_and(|m| m.is_match(path))
}

/// A file name the last part of `glob` matches (`x.rs` for `src/**/*.rs`), to ask whether the
/// glob can match something inside a folder.
fn sample(glob: &str) -> String {
    let last = glob.rsplit('/').next().unwrap_or(glob);
    let mut out = String::new();
    let mut chars = last.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' | '?' => {
                while chars.peek() == Some(&'*') {
                    chars.next();
                }
                out.push('x');
            }
            '[' => {
                let mut first = None;
                for c in chars.by_ref() {
                    if c == ']' && first.is_some() {
                        break;
                    }
                    if first.is_none() && c != '!' && c != '^' {
                        first = Some(c);
                    }
                }
                out.push(first.unwrap_or('x'));
            }
            '{' => {
                let mut taken = false;
                for c in chars.by_ref() {
                    if c == '}' {
                        break;
                    }
                    if c == ',' {
                        taken = true;
                    } else if !taken {
                        out.push(c);
                    }
                }
            }
            c => out.push(c),
        }
    }
    if out.is_empty() { "x".into() } else { out }
}

/// A task's files, normalised (files that do not normalise reserve nothing).
pub fn task_files(task: &Task) -> Vec<String> {
    task.context
        .files
        .iter()
        .filter_map(|f| normalise(f).ok())
        .collect()
}

/// The patterns of `held` that overlap any of `asked`.
fn overlapping(held: &[String], asked: &[String]) -> Vec<String> {
    held.iter()
        .filter(|h| asked.iter().any(|a| overlap(h, a)))
        .cloned()
        .collect()
}

impl Reservation {
    /// The reservation a held task makes of its files, while its lease lasts.
    pub fn of_task(task: &Task) -> Option<Reservation> {
        let agent = task.claimed_by.clone()?;
        if !task.status.is_held() || task.context.files.is_empty() {
            return None;
        }
        let paths = task_files(task);
        (!paths.is_empty()).then(|| Reservation {
            id: format!("task:{}", task.id),
            agent,
            task: Some(task.id.clone()),
            paths,
            shared: false,
            since: task
                .claimed_at
                .or(task.created_at)
                .unwrap_or(Timestamp(chrono::DateTime::<chrono::Utc>::UNIX_EPOCH)),
            expires_at: task.lease_expires_at,
            reason: None,
        })
    }

    /// A conflict with `asked` (paths another agent wants, exclusively or shared), if any.
    fn against(&self, asked: &[String], shared: bool) -> Option<Hold> {
        if self.shared && shared {
            return None;
        }
        let paths = overlapping(&self.paths, asked);
        (!paths.is_empty()).then(|| Hold {
            agent: self.agent.clone(),
            task: self.task.clone(),
            paths,
            shared: self.shared,
        })
    }
}

impl TaskFile {
    /// The reservations in force at `now`: the held tasks' files (under a live lease) and the
    /// explicit ones whose holder is alive, whose task (if any) is still held by it, and whose
    /// time has not run out.
    pub fn active_reservations(&self, now: Timestamp, lease: Duration) -> Vec<Reservation> {
        self.active_reservations_of(self.tasks.iter(), |id| self.task(id), now, lease)
    }

    /// [`Self::active_reservations`] with the board's tasks `tasks` (`task`: one of them by
    /// its id) in place of this file's own.
    pub(crate) fn active_reservations_of<'a>(
        &self,
        tasks: impl Iterator<Item = &'a Task>,
        task: impl Fn(&str) -> Option<&'a Task>,
        now: Timestamp,
        lease: Duration,
    ) -> Vec<Reservation> {
        let mut active: Vec<Reservation> = tasks
            .filter(|t| t.lease_expires_at.is_none_or(|end| end > now))
            .filter_map(Reservation::of_task)
            .collect();
        active.extend(
            self.reservations
                .iter()
                .filter(|r| self.in_force(r, &task, now, lease))
                .cloned(),
        );
        active
    }

    fn in_force<'a>(
        &self,
        r: &Reservation,
        task: impl Fn(&str) -> Option<&'a Task>,
        now: Timestamp,
        lease: Duration,
    ) -> bool {
        let alive = self
            .agents
            .get(&r.agent)
            .and_then(|a| a.last_seen)
            .is_some_and(|seen| seen.after(lease) > now);
        let task_held = r
            .task
            .as_deref()
            .is_none_or(|id| task(id).is_some_and(|t| t.is_held_by(&r.agent)));
        alive && task_held && r.expires_at.is_none_or(|end| end > now)
    }

    /// What other agents hold of `paths` now (`shared`: the asker only reads them, so others'
    /// shared reservations do not count). `agent`'s own reservations never conflict.
    pub fn holds(
        &self,
        paths: &[String],
        agent: Option<&str>,
        shared: bool,
        now: Timestamp,
        lease: Duration,
    ) -> Vec<Hold> {
        holds_among(&self.active_reservations(now, lease), paths, agent, shared)
    }

    /// Records a reservation for `new.agent` (refused, changing nothing, when another agent
    /// holds any of its paths in a way that conflicts).
    pub fn reserve(
        &mut self,
        new: NewReservation,
        now: Timestamp,
        lease: Duration,
    ) -> Result<Reservation> {
        crate::names::validate_agent_id(&new.agent)?;
        let paths = normalise_all(&new.paths)?;
        if let Some(reason) = &new.reason {
            crate::text::check_text("reason", reason, 1024, false)?;
        }
        if let Some(id) = &new.task {
            let task = self
                .task(id)
                .ok_or_else(|| StoreError::UnknownTask { id: id.clone() })?;
            if !task.is_held_by(&new.agent) {
                return Err(StoreError::InvalidInput {
                    field: "task",
                    reason: format!(
                        "{id} is not held by {}; reserve for a task you hold",
                        new.agent
                    ),
                });
            }
        }
        refuse_held(&self.holds(&paths, Some(&new.agent), new.shared, now, lease))?;
        self.touch_agent(&new.agent, now);
        let number = self
            .reservations
            .iter()
            .filter_map(|r| r.id.strip_prefix("r-")?.parse::<u64>().ok())
            .max()
            .unwrap_or(0)
            + 1;
        let reservation = Reservation {
            id: format!("r-{number}"),
            agent: new.agent,
            task: new.task,
            paths,
            shared: new.shared,
            since: now,
            expires_at: new.ttl.map(|ttl| now.after(ttl)),
            reason: new.reason,
        };
        // Reservations that ended are dropped as new ones are made.
        let reservations = std::mem::take(&mut self.reservations);
        self.reservations = reservations
            .into_iter()
            .filter(|r| self.in_force(r, |id| self.task(id), now, lease))
            .collect();
        self.reservations.push(reservation.clone());
        Ok(reservation)
    }

    /// Gives back `agent`'s explicit reservations: those with one of `paths` (all of them when
    /// `paths` is empty). Returns the ones removed.
    pub fn unreserve(&mut self, agent: &str, paths: &[String]) -> Result<Vec<Reservation>> {
        crate::names::validate_agent_id(agent)?;
        let paths = if paths.is_empty() {
            Vec::new()
        } else {
            normalise_all(paths)?
        };
        let (gone, kept): (Vec<Reservation>, Vec<Reservation>) =
            std::mem::take(&mut self.reservations)
                .into_iter()
                .partition(|r| {
                    r.agent == agent
                        && (paths.is_empty() || r.paths.iter().any(|p| paths.contains(p)))
                });
        self.reservations = kept;
        Ok(gone)
    }

    /// The earliest instant at which an active reservation ends on its own (its ttl or its
    /// holder's lease), for waiters: a task kept back by files becomes claimable then.
    pub fn next_reservation_end(&self, now: Timestamp, lease: Duration) -> Option<Timestamp> {
        self.reservations
            .iter()
            .filter(|r| self.in_force(r, |id| self.task(id), now, lease))
            .filter_map(|r| {
                let holder_gone = self
                    .agents
                    .get(&r.agent)
                    .and_then(|a| a.last_seen)
                    .map(|seen| seen.after(lease));
                match (r.expires_at, holder_gone) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                }
            })
            .min()
    }
}

/// What of `paths` the reservations `active` hold for agents other than `agent`.
pub fn holds_among(
    active: &[Reservation],
    paths: &[String],
    agent: Option<&str>,
    shared: bool,
) -> Vec<Hold> {
    active
        .iter()
        .filter(|r| agent != Some(r.agent.as_str()))
        .filter_map(|r| r.against(paths, shared))
        .collect()
}

/// The exclusive reservations among `active` that keep `agent` (or, with none, anybody) from
/// claiming `task`: its files overlap them, and they are not the task's own.
pub fn task_conflicts(active: &[Reservation], task: &Task, agent: Option<&str>) -> Vec<Hold> {
    // Nothing held (the usual board) or nothing named: nothing to normalise the paths for.
    if task.context.files.is_empty() || active.is_empty() {
        return Vec::new();
    }
    holds_among(active, &task_files(task), agent, true)
        .into_iter()
        .filter(|h| !h.shared && h.task.as_deref() != Some(&task.id))
        .collect()
}

/// The `paths_held` refusal when `holds` is not empty: a reservation or a claim whose files
/// other agents hold, refused the same on every store.
pub fn refuse_held(holds: &[Hold]) -> Result<()> {
    if holds.is_empty() {
        return Ok(());
    }
    Err(StoreError::PathsHeld {
        holds: holds
            .iter()
            .map(describe_hold)
            .collect::<Vec<_>>()
            .join("; "),
    })
}

/// `AGENT (TASK) holds PATHS`, for messages.
pub fn describe_hold(hold: &Hold) -> String {
    format!(
        "{} holds {}{}",
        hold.holder(),
        hold.paths.join(", "),
        if hold.shared { " (shared)" } else { "" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_normalised_and_confined() {
        assert_eq!(
            normalise("./src//api/users.ts").unwrap(),
            "src/api/users.ts"
        );
        assert_eq!(normalise("src/api/**").unwrap(), "src/api/**");
        assert_eq!(normalise("src/api/").unwrap(), "src/api/");
        for hostile in [
            "/etc/passwd",
            "../outside",
            "src/../../x",
            "**/../**",
            "C:\\x",
            "a\u{7}b",
            "",
            ".",
            "src/[",
            &"x".repeat(MAX_PATTERN_BYTES + 1),
        ] {
            assert!(normalise(hostile).is_err(), "{hostile:?} accepted");
        }
    }

    #[test]
    fn overlapping_patterns_meet_on_a_key_one_holds_exclusively() {
        let patterns = [
            "src/api/users.ts",
            "src/api/",
            "src/api/**",
            "src/**/*.rs",
            "src/*.ts",
            "docs/guide.md",
            "*.md",
            "src/api/users.ts/x",
        ];
        for a in patterns {
            for b in patterns {
                if !overlap(a, b) {
                    continue;
                }
                let (ea, sa) = lock_keys(&[a.to_string()]);
                let (eb, sb) = lock_keys(&[b.to_string()]);
                let meet = ea.iter().any(|k| eb.contains(k) || sb.contains(k))
                    || eb.iter().any(|k| sa.contains(k));
                assert!(meet, "{a} and {b} overlap but their keys do not meet");
            }
        }
        assert_eq!(
            lock_keys(&["src/api/users.ts".into()]),
            (
                vec!["src/api/users.ts".to_string()],
                vec!["".to_string(), "src".into(), "src/api".into()]
            )
        );
    }

    #[test]
    fn overlap_is_decided_both_ways_on_paths_and_globs() {
        let yes = [
            ("src/api/users.ts", "src/api/users.ts"),
            ("src/api", "src/api/users.ts"),
            ("src/api/", "src/api/users.ts"),
            ("src/api/**", "src/api/users.ts"),
            ("src/api/*.ts", "src/api/users.ts"),
            ("src/**/*.rs", "src/api/"),
            ("src/{lib,main}.rs", "src/"),
            ("src/**", "src/api/*.ts"),
            ("*.md", "README.md"),
            ("**", "anything/at/all"),
            ("src/", "src/api/"),
        ];
        for (a, b) in yes {
            assert!(overlap(a, b) && overlap(b, a), "{a} vs {b}");
        }
        let no = [
            ("src/api/users.ts", "src/api/orders.ts"),
            ("src/api", "src/apix/users.ts"),
            ("src/api/*.ts", "src/api/deep/users.ts"),
            ("src/*.ts", "src/api/"),
            ("src/**/*.rs", "src/api/users.ts"),
            ("src/**", "docs/*.md"),
            ("*.md", "docs/README.md"),
            ("docs/**", "src/main.rs"),
        ];
        for (a, b) in no {
            assert!(!overlap(a, b) && !overlap(b, a), "{a} vs {b}");
        }
    }
}
