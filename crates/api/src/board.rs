//! The board as a window keeps it: what changed since the board it holds.
//!
//! The desktop and the served UI redraw the board on every change anyone makes. Sent whole
//! each time, a board costs its size at every step however little changed (its JSON, the
//! window's parse of it, the window's comparison of every card): on a board of 10,000 tasks
//! that was most of a change's half second. So a window asks with the generation of the board
//! it holds, and hears only the tasks whose view changed, the ids of those gone, and the order
//! when it is not the one the window works out itself ([`BoardUpdate`]). A window with no
//! board, or with one older than the few kept here, hears the whole board.
//!
//! The boards kept share their unchanged tasks' views: a view equal to the last board's is
//! that view, so a generation costs only what changed in it.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use std::time::Duration;

use baton_core::{HeldView, SharedBoard, Spend, StatusReport, Task, TaskView};
use serde::Serialize;

/// How many boards are kept to answer against: a window and a phone or two reading in turn
/// each find theirs.
const KEPT: usize = 4;

/// The board's changes since the generation a window holds, and its counts.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Serialize)]
pub struct BoardUpdate {
    /// This board's generation: what to ask with next time.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub generation: u64,
    /// The generation this update is against; `None`: `report.tasks` is the whole board.
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub base: Option<u64>,
    /// The board's counts, goal and spend, with the tasks whose view changed since `base` (or
    /// added), in the board's order; every task when there is no `base`.
    pub report: StatusReport,
    /// Tasks on the `base` board that are not on this one.
    pub removed: Vec<String>,
    /// Every task's id in the board's order, when that is not `base`'s order without those
    /// removed, with the tasks new since `base` after it in the order `report.tasks` has them.
    pub order: Option<Vec<String>>,
}

/// The last few boards read for windows (see the module's documentation).
#[derive(Debug, Default)]
pub struct BoardUpdates {
    /// Oldest first.
    kept: Mutex<VecDeque<Board>>,
}

/// The next board's generation, in any project of this process, counted from the time the
/// process first needed one (in microseconds since 1970): a window that still holds a board
/// of another project, or of a server that has since restarted, holds a generation that is
/// none of these, and is sent the whole board. (Below 2^53 until the year 2255: exact as a
/// JavaScript number.)
fn next_generation() -> u64 {
    static NEXT: OnceLock<AtomicU64> = OnceLock::new();
    NEXT.get_or_init(|| {
        let since_1970 = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        AtomicU64::new(since_1970.as_micros() as u64)
    })
    .fetch_add(1, Ordering::Relaxed)
}

/// A board as a window was sent it.
#[derive(Debug)]
struct Board {
    generation: u64,
    /// Read with the landed work (`task_status all=true`).
    all: bool,
    /// In the board's order.
    views: Vec<Arc<TaskView>>,
    /// The task each view was made of, as the store shares it ([`SharedBoard`]); empty for a
    /// board read whole.
    made_of: Vec<Arc<Task>>,
    /// Each task's place in `views` by its id's hash, made when first needed: a board compared
    /// with one whose tasks are where they were needs it only for the tasks new to it. By the
    /// ids' hashes rather than the ids, so that it copies none of them: two ids of one hash
    /// are told apart by a look along the board.
    places: OnceLock<foldhash::HashMap<u64, usize>>,
}

/// An id's hash, for [`Board::places`]: keyed at random once per process, so that ids cannot be
/// chosen to share one.
fn id_hash(id: &str) -> u64 {
    use std::hash::BuildHasher;
    static KEYS: OnceLock<foldhash::fast::RandomState> = OnceLock::new();
    KEYS.get_or_init(Default::default).hash_one(id)
}

impl Board {
    fn places(&self) -> &foldhash::HashMap<u64, usize> {
        self.places.get_or_init(|| {
            let mut places =
                foldhash::HashMap::with_capacity_and_hasher(self.views.len(), Default::default());
            for (at, view) in self.views.iter().enumerate() {
                places.entry(id_hash(&view.task.id)).or_insert(at);
            }
            places
        })
    }

    /// Whether task `id` is on this board.
    fn contains(&self, id: &str) -> bool {
        self.place(id, usize::MAX).is_some()
    }

    /// The view of task `id`, looked for at place `at` first.
    fn view(&self, id: &str, at: usize) -> Option<&Arc<TaskView>> {
        self.place(id, at).map(|at| &self.views[at])
    }

    /// Where task `id` is, looked for at place `at` first.
    fn place(&self, id: &str, at: usize) -> Option<usize> {
        if self.views.get(at).is_some_and(|view| view.task.id == id) {
            return Some(at);
        }
        let at = *self.places().get(&id_hash(id))?;
        match self.views[at].task.id == id {
            true => Some(at),
            false => self.views.iter().position(|view| view.task.id == id),
        }
    }

    /// The view of task `id` (looked for at place `at` first) and the task it was made of.
    fn held(&self, id: &str, at: usize) -> Option<HeldView<'_>> {
        let at = self.place(id, at)?;
        Some((self.made_of.get(at), &self.views[at]))
    }

    fn ids(&self) -> impl Iterator<Item = &String> {
        self.views.iter().map(|view| &view.task.id)
    }
}

impl BoardUpdates {
    /// `report` (the board now, read with the landed work when `all`) as an update for a window
    /// that holds generation `known`.
    pub fn update(&self, mut report: StatusReport, all: bool, known: Option<u64>) -> BoardUpdate {
        let mut kept = self.kept();
        let last = kept.iter().rev().find(|board| board.all == all);
        let tasks = std::mem::take(&mut report.tasks);
        let mut views = Vec::with_capacity(tasks.len());
        for (at, view) in tasks.into_iter().enumerate() {
            views.push(match last.and_then(|last| last.view(&view.task.id, at)) {
                Some(was) if **was == view => was.clone(),
                _ => Arc::new(view),
            });
        }
        answer(&mut kept, report, (views, Vec::new()), all, known)
    }

    /// [`Self::update`] for the board a store shared (without the landed work): the views
    /// of the last board kept where they cannot have changed, without being built again
    /// ([`SharedBoard::views`]). `spend` is the report's.
    pub fn update_shared(
        &self,
        board: SharedBoard,
        lease: Duration,
        spend: Option<Spend>,
        known: Option<u64>,
    ) -> BoardUpdate {
        let mut kept = self.kept();
        let last = kept.iter().rev().find(|board| !board.all);
        let (views, mut report) = board.views(lease, |at, id| last?.held(id, at));
        report.spend = spend;
        answer(&mut kept, report, (views, board.tasks), false, known)
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, VecDeque<Board>> {
        self.kept
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The update for a window that holds generation `known`, of the board whose views are
/// `views` (made of the shared tasks `made_of`, or of none), kept with those `kept` unless it
/// is the last one again. `report` has no tasks; the answer's are those the window lacks.
fn answer(
    kept: &mut VecDeque<Board>,
    mut report: StatusReport,
    (views, made_of): (Vec<Arc<TaskView>>, Vec<Arc<Task>>),
    all: bool,
    known: Option<u64>,
) -> BoardUpdate {
    let last = kept.iter_mut().rev().find(|board| board.all == all);
    let unchanged = last.filter(|last| {
        last.views.len() == views.len()
            && last
                .views
                .iter()
                .zip(&views)
                .all(|(a, b)| Arc::ptr_eq(a, b))
    });
    let generation = match unchanged {
        Some(last) => {
            // The same views, which may have been made of tasks shared again since.
            last.made_of = made_of;
            last.generation
        }
        None => {
            let generation = next_generation();
            if kept.len() == KEPT {
                kept.pop_front();
            }
            kept.push_back(Board {
                generation,
                all,
                views,
                made_of,
                places: OnceLock::new(),
            });
            generation
        }
    };
    let board = kept
        .iter()
        .find(|board| board.generation == generation)
        .expect("the board just kept");
    let base = known.and_then(|known| {
        kept.iter()
            .find(|base| base.generation == known && base.all == all)
    });
    let Some(base) = base else {
        report.tasks = board.views.iter().map(|view| (**view).clone()).collect();
        return BoardUpdate {
            generation,
            base: None,
            report,
            removed: Vec::new(),
            order: None,
        };
    };
    report.tasks = board
        .views
        .iter()
        .enumerate()
        .filter(|(at, view)| {
            let was = base.view(&view.task.id, *at);
            was.is_none_or(|was| !Arc::ptr_eq(was, view))
        })
        .map(|(_, view)| (**view).clone())
        .collect();
    // Every task of the base where it was: none gone, and those new after them.
    let in_place =
        base.views.len() <= board.views.len() && base.ids().eq(board.ids().take(base.views.len()));
    let (removed, order) = match in_place {
        true => (Vec::new(), None),
        false => {
            let removed = base.ids().filter(|id| !board.contains(id));
            let stayed = base.ids().filter(|id| board.contains(id));
            let added = board.ids().filter(|id| !base.contains(id));
            let keeps_order = stayed.chain(added).eq(board.ids());
            (
                removed.cloned().collect(),
                (!keeps_order).then(|| board.ids().cloned().collect()),
            )
        }
    };
    BoardUpdate {
        generation,
        base: Some(base.generation),
        report,
        removed,
        order,
    }
}

#[cfg(test)]
mod tests;
