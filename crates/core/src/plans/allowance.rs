//! How many tasks a goal's plan may have: [`MAX_PLAN_TASKS`] unless the lead let it have more,
//! asked when its planner reached the limit. Kept as a document per goal's plan
//! (`plans/PLAN.json`) beside the board, with the answers that raised it: an answer raises the
//! limit once, however often (and by however many supervisors) it is heard.

use serde::{Deserialize, Serialize};

use crate::documents::DocumentStore;
use crate::error::{Result, StoreError};
use crate::requests::MAX_PLAN_TASKS;

/// The folder of plans' allowances.
pub const PLANS: &str = "plans";

/// What the lead allowed a goal's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Allowance {
    /// The most tasks its tree may have.
    pub tasks: usize,
    /// The lead's answers heard so far (question ids), each counted once.
    #[serde(default)]
    pub answers: Vec<String>,
}

impl Default for Allowance {
    fn default() -> Allowance {
        Allowance {
            tasks: MAX_PLAN_TASKS,
            answers: Vec::new(),
        }
    }
}

fn document(plan: &str) -> Result<String> {
    crate::names::validate_task_id(plan)?;
    Ok(format!("{PLANS}/{plan}.json"))
}

fn parse(name: &str, value: serde_json::Value) -> Result<Allowance> {
    serde_json::from_value(value).map_err(|e| {
        StoreError::invalid(
            "plan allowance",
            format!("{name} is not what Baton wrote ({e}); fix or remove it"),
        )
    })
}

/// What goal's plan `plan` (the root of its tree) is allowed now.
pub fn allowance(docs: &dyn DocumentStore, plan: &str) -> Result<Allowance> {
    let name = document(plan)?;
    match docs.read_document(&name)? {
        Some(value) => parse(&name, value),
        None => Ok(Allowance::default()),
    }
}

/// Hears the lead's answer `question` to plan `plan`'s planner at its task limit: `raise`
/// lets the plan have [`MAX_PLAN_TASKS`] more. An answer heard before changes nothing. What
/// the plan is allowed after.
pub fn hear_answer(
    docs: &dyn DocumentStore,
    plan: &str,
    question: &str,
    raise: bool,
) -> Result<Allowance> {
    let name = document(plan)?;
    let mut after = Allowance::default();
    docs.change_document(&name, &mut |current, _| {
        let mut allowance = match current {
            Some(value) => parse(&name, value)?,
            None => Allowance::default(),
        };
        let heard = allowance.answers.iter().any(|a| a == question);
        if !heard {
            allowance.answers.push(question.to_string());
            if raise {
                allowance.tasks += MAX_PLAN_TASKS;
            }
        }
        after = allowance.clone();
        Ok((!heard).then(|| serde_json::to_value(&allowance).expect("allowances serialise")))
    })?;
    Ok(after)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::MemoryDocuments as Memory;

    #[test]
    fn an_answer_raises_the_limit_once_and_a_refusal_keeps_it() {
        let docs = Memory::default();
        let docs: &dyn DocumentStore = &docs;
        assert_eq!(allowance(docs, "plan-1").unwrap().tasks, MAX_PLAN_TASKS);
        let raised = hear_answer(docs, "plan-1", "q-1", true).unwrap();
        assert_eq!(raised.tasks, 2 * MAX_PLAN_TASKS);
        // Heard again (a second supervisor, a restart): nothing more.
        assert_eq!(hear_answer(docs, "plan-1", "q-1", true).unwrap(), raised);
        let kept = hear_answer(docs, "plan-1", "q-2", false).unwrap();
        assert_eq!(kept.tasks, 2 * MAX_PLAN_TASKS);
        assert_eq!(kept.answers, ["q-1", "q-2"]);
        assert_eq!(allowance(docs, "plan-1").unwrap(), kept);
        assert_eq!(allowance(docs, "plan-2").unwrap().tasks, MAX_PLAN_TASKS);
    }

    #[test]
    fn a_hostile_plan_id_names_no_document() {
        let docs = Memory::default();
        let docs: &dyn DocumentStore = &docs;
        for bad in ["../x", "a/b", ""] {
            assert!(allowance(docs, bad).is_err(), "{bad:?}");
            assert!(hear_answer(docs, bad, "q-1", true).is_err(), "{bad:?}");
        }
    }
}
