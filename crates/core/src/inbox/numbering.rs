//! Numbering the inbox's records: each question and message is `PREFIX-N`, the counter in
//! `inbox/numbers.json` gives N, and a record is created, never overwritten. A counter behind
//! its records (rewound by restoring an old copy, or deleted) is repaired from the records'
//! names, by the next record and by `leader doctor --fix`; it is never trusted over them.

use serde::Serialize;
use serde_json::Value;

use super::{MESSAGES, NUMBERS, QUESTIONS, all_messages, document, questions};
use crate::documents::DocumentStore;
use crate::error::{Result, StoreError};
use crate::time::Timestamp;

/// The next number of `kind` (`questions` or `messages`), taken under the numbers' hold.
fn next_number(docs: &dyn DocumentStore, kind: &str) -> Result<u64> {
    let mut number = 0;
    docs.change_document(NUMBERS, &mut |current, _| {
        let mut numbers = current.unwrap_or_else(|| serde_json::json!({}));
        number = numbers[kind].as_u64().unwrap_or(0) + 1;
        numbers[kind] = number.into();
        Ok(Some(numbers))
    })?;
    Ok(number)
}

/// Writes a new record of `kind` (`questions`, `messages`) in `folder`: numbered next, its id
/// `PREFIX-N`, made by `make` from the id and the store's time, and returned as written.
///
/// A record is created, never overwritten: when the number the counter gives is taken (the
/// counter was rewound, deleted or restored from an old copy), the counter is repaired from
/// the folder's records and the next free number is used.
pub(super) fn create<T: Serialize>(
    docs: &dyn DocumentStore,
    folder: &str,
    prefix: &str,
    kind: &str,
    make: &dyn Fn(String, Timestamp) -> T,
) -> Result<T> {
    for _ in 0..MAX_NUMBER_TRIES {
        let id = format!("{prefix}-{}", next_number(docs, kind)?);
        let mut written = None;
        let mut taken = false;
        docs.change_document(&document(folder, &id), &mut |current, now| {
            if current.is_some() {
                taken = true;
                return Ok(None);
            }
            let record = make(id.clone(), now);
            let value = serde_json::to_value(&record).expect("inbox records serialise");
            written = Some(record);
            Ok(Some(value))
        })?;
        match written {
            Some(record) if !taken => return Ok(record),
            _ => {
                repair_number(docs, folder, prefix, kind)?;
            }
        }
    }
    Err(StoreError::invalid(
        "inbox",
        format!(
            "{NUMBERS} keeps giving numbers of {folder} that are taken; run `baton leader \
             doctor --fix`"
        ),
    ))
}

/// How many numbers a new record tries before it gives up (one, unless the counter is behind).
const MAX_NUMBER_TRIES: usize = 8;

/// The highest number of `PREFIX-N` records in `folder` (0 when there are none), from the
/// documents' names, so a record that does not parse still counts.
pub fn highest_number(docs: &dyn DocumentStore, folder: &str, prefix: &str) -> Result<u64> {
    Ok(docs
        .document_names_in(folder)?
        .iter()
        .filter_map(|name| {
            name.rsplit('/')
                .next()?
                .strip_suffix(".json")?
                .strip_prefix(prefix)?
                .strip_prefix('-')?
                .parse::<u64>()
                .ok()
        })
        .max()
        .unwrap_or(0))
}

/// Moves the counter of `kind` up to the highest number `folder` holds, if it is behind.
/// Returns the number it was moved from, when it moved.
pub fn repair_number(
    docs: &dyn DocumentStore,
    folder: &str,
    prefix: &str,
    kind: &str,
) -> Result<Option<u64>> {
    let highest = highest_number(docs, folder, prefix)?;
    let mut moved = None;
    docs.change_document(NUMBERS, &mut |current, _| {
        let mut numbers = current.unwrap_or_else(|| serde_json::json!({}));
        let now = numbers[kind].as_u64().unwrap_or(0);
        if now >= highest {
            return Ok(None);
        }
        moved = Some(now);
        numbers[kind] = highest.into();
        Ok(Some(numbers))
    })?;
    Ok(moved)
}

/// For `leader doctor`: the inbox's counters that are behind their records, found and (with
/// `fix`) moved up, and its questions and messages that cannot be read.
pub fn inbox_findings(
    docs: &dyn DocumentStore,
    fix: bool,
) -> Result<(Vec<crate::doctor::Finding>, Vec<String>)> {
    let (mut findings, mut fixed) = (Vec::new(), Vec::new());
    let questions = questions(docs, false)?.unreadable;
    for unreadable in questions.into_iter().chain(all_messages(docs)?.unreadable) {
        findings.push(crate::doctor::Finding {
            kind: crate::doctor::FindingKind::UnreadableDocument,
            task: None,
            message: format!(
                ".coordination/{} cannot be read: {}",
                unreadable.document, unreadable.problem
            ),
            fixable: false,
        });
    }
    let numbers = docs.read_document(NUMBERS)?.unwrap_or(Value::Null);
    for (folder, prefix, kind) in [(QUESTIONS, "q", "questions"), (MESSAGES, "m", "messages")] {
        let highest = highest_number(docs, folder, prefix)?;
        let now = numbers[kind].as_u64().unwrap_or(0);
        if now >= highest {
            continue;
        }
        let message =
            format!("{NUMBERS} counts {kind} to {now}, but {folder} holds {prefix}-{highest}");
        match fix {
            true => {
                repair_number(docs, folder, prefix, kind)?;
                fixed.push(format!("{message}: moved the counter to {highest}"));
            }
            false => findings.push(crate::doctor::Finding {
                kind: crate::doctor::FindingKind::InboxCounterBehind,
                task: None,
                message,
                fixable: true,
            }),
        }
    }
    Ok((findings, fixed))
}
