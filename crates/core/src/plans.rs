//! Plans within plans. A team's goal is a plan task (kind `plan`); the tasks its planner adds
//! say they are of it ([`Task::plan`]). One of them may itself be a plan task: a slice of the
//! goal planned apart once its dependencies are done (a sub-plan), whose own tasks say they are
//! of it. A plan's tree is its tasks and, through its sub-plans, theirs, down to
//! [`MAX_PLAN_DEPTH`]: what the plan is carried out by, and what its size is counted over.

use std::collections::BTreeSet;

use crate::model::{Task, TaskFile, TaskKind};

mod allowance;
pub use allowance::{Allowance, PLANS, allowance, hear_answer};

/// How deep plans go: a goal's plan is at depth 0, a sub-plan of it at 1, a sub-plan of that at
/// 2; none deeper.
pub const MAX_PLAN_DEPTH: usize = 2;

impl TaskFile {
    /// How deep plan task `id` is: 0 for a goal's plan (of no plan), 1 for a sub-plan of one,
    /// and so on (a chain that loops or runs past its end counts as far as it goes).
    pub fn plan_depth(&self, id: &str) -> usize {
        let mut depth = 0;
        let mut seen = BTreeSet::new();
        let mut current = self.task(id).and_then(|t| t.plan.as_deref());
        while let Some(parent) = current {
            if !seen.insert(parent) || depth > MAX_PLAN_DEPTH {
                break;
            }
            depth += 1;
            current = self.task(parent).and_then(|t| t.plan.as_deref());
        }
        depth
    }

    /// The goal's plan plan task `id` is in the tree of: itself when it is of no plan.
    pub fn plan_root(&self, id: &str) -> String {
        let mut root = id.to_string();
        for _ in 0..=MAX_PLAN_DEPTH {
            match self.task(&root).and_then(|t| t.plan.clone()) {
                Some(parent) if parent != root => root = parent,
                _ => break,
            }
        }
        root
    }

    /// The plan tasks of plan `root`'s tree: itself, and the sub-plans in it.
    pub fn plans_in(&self, root: &str) -> BTreeSet<String> {
        let mut plans = BTreeSet::from([root.to_string()]);
        for _ in 0..=MAX_PLAN_DEPTH {
            let more: Vec<String> = self
                .tasks
                .iter()
                .filter(|t| t.kind == TaskKind::Plan)
                .filter(|t| t.plan.as_ref().is_some_and(|p| plans.contains(p)))
                .map(|t| t.id.clone())
                .filter(|id| !plans.contains(id))
                .collect();
            if more.is_empty() {
                break;
            }
            plans.extend(more);
        }
        plans
    }

    /// The tasks of plan `root`'s tree, in board order: each of it or of a sub-plan in it.
    pub fn plan_tree(&self, root: &str) -> Vec<&Task> {
        let plans = self.plans_in(root);
        self.tasks
            .iter()
            .filter(|t| t.plan.as_ref().is_some_and(|p| plans.contains(p)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::model::{TaskKind, TaskStatus};
    use crate::testing::{file_with, task};

    fn of(id: &str, plan: &str, kind: TaskKind) -> crate::Task {
        let mut t = task(id, TaskStatus::Available, &[]);
        t.plan = Some(plan.into());
        t.kind = kind;
        t
    }

    /// A plan's tree reaches through its sub-plans, and no further than the board's other
    /// plans; depth counts the plans above.
    #[test]
    fn a_plan_s_tree_holds_its_sub_plans_tasks() {
        let mut goal = task("plan-1", TaskStatus::Claimed, &[]);
        goal.kind = TaskKind::Plan;
        let mut other = task("plan-2", TaskStatus::Claimed, &[]);
        other.kind = TaskKind::Plan;
        let file = file_with(vec![
            goal,
            other,
            of("a", "plan-1", TaskKind::Work),
            of("ui", "plan-1", TaskKind::Plan),
            of("ui-a", "ui", TaskKind::Work),
            of("ui-deeper", "ui", TaskKind::Plan),
            of("deep-a", "ui-deeper", TaskKind::Work),
            of("z", "plan-2", TaskKind::Work),
            task("loose", TaskStatus::Available, &[]),
        ]);
        let ids = |root: &str| -> Vec<String> {
            file.plan_tree(root).iter().map(|t| t.id.clone()).collect()
        };
        assert_eq!(ids("plan-1"), ["a", "ui", "ui-a", "ui-deeper", "deep-a"]);
        assert_eq!(ids("ui"), ["ui-a", "ui-deeper", "deep-a"]);
        assert_eq!(ids("plan-2"), ["z"]);
        assert_eq!(file.plan_root("ui-deeper"), "plan-1");
        assert_eq!(file.plan_root("plan-2"), "plan-2");
        assert_eq!(
            [
                file.plan_depth("plan-1"),
                file.plan_depth("ui"),
                file.plan_depth("ui-deeper"),
            ],
            [0, 1, 2]
        );
    }

    /// A chain of plans that loops (no store writes one; a hand-edited file might) ends.
    #[test]
    fn a_looping_chain_of_plans_ends() {
        let file = file_with(vec![
            of("p", "q", TaskKind::Plan),
            of("q", "p", TaskKind::Plan),
        ]);
        assert!(file.plan_depth("p") <= super::MAX_PLAN_DEPTH + 1);
        assert_eq!(file.plans_in("p").len(), 2);
    }
}
