//! What a paired device may call, decided here on the server for every request (the page only
//! hides what it could not do). A lead device may call every operation the desktop can. A
//! responder is someone answering agents from a phone: it may call what the catalogue declares
//! a responder's ([`baton_api::Callers::responder`]: reading everything, answering questions,
//! commenting on a review and requesting changes, sending and acknowledging messages,
//! stopping, pausing and resuming an agent or the planner), with two limits of its own here: an
//! approval is answered with allow or deny, not "always allow", which changes the policy, and a
//! stop, pause or resume names one agent, not the team. It may not start teams, merge, add,
//! edit, move or cancel tasks, run checks, or change budgets, policies or profiles.

use baton_api::{CatalogueEntry, Error, OpenProject};
use baton_core::ErrorKind;
use serde_json::Value;

use crate::devices::{Device, Scope};

/// Whether `device` may call `entry` with `request`; `Err` says why not.
pub fn check(
    device: &Device,
    entry: &CatalogueEntry,
    request: &Value,
    project: &OpenProject,
) -> Result<(), Error> {
    // A device is the lead's, never an agent: what it sends or reads, it does as the lead.
    for (operation, field) in [("message_send", "from"), ("message_ack", "reader")] {
        if entry.name == operation
            && let Some(named) = request.get(field).and_then(Value::as_str)
            && named != baton_core::LEAD
        {
            return Err(Error::new(
                ErrorKind::NotAllowed,
                format!(
                    "device {} speaks as the lead, not as {named:?}: leave `{field}` out",
                    device.id
                ),
            ));
        }
    }
    if device.scope == Scope::Lead {
        return Ok(());
    }
    let refuse = |what: String| {
        Err(Error::new(
            ErrorKind::NotAllowed,
            format!(
                "device {} is paired as a responder, which may not {what}; a lead device may \
                 (`baton serve pair --as lead`)",
                device.id
            ),
        ))
    };
    if !entry.callers.responder {
        return refuse(format!("call {}", entry.name));
    }
    match entry.name {
        // One agent, not the whole team.
        "team_stop" | "team_pause" | "team_resume"
            if request.get("worker").is_none_or(Value::is_null) =>
        {
            let what = entry.name.trim_start_matches("team_");
            refuse(format!(
                "{what} the whole team (name the worker, or the planner, to {what})"
            ))
        }
        "answer_question" if chooses_always(request, project) => {
            refuse("answer \"always allow\", which changes the project's policy".into())
        }
        _ => Ok(()),
    }
}

/// Whether an `answer_question` request picks an approval's "always allow".
fn chooses_always(request: &Value, project: &OpenProject) -> bool {
    let (Some(id), Some(answer)) = (
        request.get("id").and_then(Value::as_str),
        request.get("answer").and_then(Value::as_str),
    ) else {
        return false;
    };
    let Ok(question) = baton_core::inbox::question(&*project.documents, id) else {
        return false;
    };
    let always = baton_api::approvals::ALWAYS;
    question.choices.iter().any(|c| c == always)
        && baton_core::inbox::chosen(&question.choices, answer).is_ok_and(|c| c == always)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn device(scope: Scope) -> Device {
        serde_json::from_value(json!({
            "id": "d-1", "name": "Phone", "scope": scope.as_str(),
            "paired_at": "2026-11-26T12:00:00.000000Z", "token_sha256": "00",
        }))
        .unwrap()
    }

    fn project() -> (tempfile::TempDir, OpenProject) {
        let dir = tempfile::tempdir().unwrap();
        let store = baton_folder::FolderStore::init(dir.path(), "Goal", None).unwrap();
        (dir, OpenProject::folder(store))
    }

    fn entry(name: &str) -> CatalogueEntry {
        baton_api::find(name).unwrap()
    }

    #[test]
    fn a_responder_reads_and_answers_but_does_not_merge_start_or_edit() {
        let (_dir, project) = project();
        let responder = device(Scope::Responder);
        let lead = device(Scope::Lead);
        for read in ["task_status", "inbox_read", "team_status", "task_review"] {
            assert!(
                check(&responder, &entry(read), &json!({}), &project).is_ok(),
                "{read}"
            );
        }
        let answer = json!({"id": "q-1", "answer": "yes"});
        assert!(check(&responder, &entry("answer_question"), &answer, &project).is_ok());
        let stop_one = json!({"worker": "cc1", "now": true});
        assert!(check(&responder, &entry("team_stop"), &stop_one, &project).is_ok());
        let planner = json!({"worker": "planner"});
        for name in ["team_pause", "team_resume"] {
            assert!(check(&responder, &entry(name), &planner, &project).is_ok());
        }
        for (name, request) in [
            ("task_merge", json!({})),
            ("team_up", json!({})),
            ("task_add", json!({})),
            ("task_edit", json!({})),
            ("task_cancel", json!({})),
            ("review_check", json!({})),
            ("team_stop", json!({"now": true})),
            ("team_pause", json!({})),
            ("team_resume", json!({"worker": null})),
        ] {
            let err = check(&responder, &entry(name), &request, &project).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::NotAllowed, "{name}");
            assert!(
                check(&lead, &entry(name), &request, &project).is_ok(),
                "{name}"
            );
        }
    }

    #[test]
    fn a_device_sends_and_reads_as_the_lead_never_as_an_agent() {
        let (_dir, project) = project();
        for scope in [Scope::Responder, Scope::Lead] {
            let device = device(scope);
            let send = |from: Option<&str>| {
                let mut request = json!({"to": "ex1", "subject": "s", "body": "b"});
                if let Some(from) = from {
                    request["from"] = json!(from);
                }
                check(&device, &entry("message_send"), &request, &project)
            };
            assert!(send(None).is_ok());
            assert!(send(Some("lead")).is_ok());
            let err = send(Some("ex1")).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::NotAllowed);
            assert!(err.to_string().contains("speaks as the lead"), "{err}");
            let ack = json!({"ids": ["m-1"], "reader": "ex1"});
            assert!(check(&device, &entry("message_ack"), &ack, &project).is_err());
        }
    }

    #[test]
    fn a_responder_may_allow_or_deny_an_approval_but_not_always_allow_it() {
        let (_dir, project) = project();
        let asked = baton_core::inbox::ask(
            &*project.documents,
            baton_core::inbox::NewQuestion {
                agent: "cc1".into(),
                task: None,
                text: "May I run Bash: rm -rf build?".into(),
                choices: ["allow", "deny", "always allow"].map(String::from).to_vec(),
                about: baton_core::inbox::About::Question,
            },
        )
        .unwrap();
        let responder = device(Scope::Responder);
        let answer = |text: &str| json!({"id": asked.id, "answer": text});
        for ok in ["allow", "deny", "2", "Allow"] {
            assert!(
                check(&responder, &entry("answer_question"), &answer(ok), &project).is_ok(),
                "{ok}"
            );
        }
        for always in ["always allow", "3", "Always Allow"] {
            let err = check(
                &responder,
                &entry("answer_question"),
                &answer(always),
                &project,
            )
            .unwrap_err();
            assert!(err.to_string().contains("always allow"), "{err}");
        }
        assert!(
            check(
                &device(Scope::Lead),
                &entry("answer_question"),
                &answer("3"),
                &project
            )
            .is_ok()
        );
    }
}
