use std::time::Duration;

use baton_core::{ClaimRequest, Files, NewReservation, TaskFile, TaskStatus, Timestamp};

use super::*;

const LEASE: Duration = Duration::from_secs(900);

/// A board of `n` tasks' bytes.
fn board(n: usize) -> Vec<u8> {
    crate::test_boards::board(n).1
}

fn parse_whole(bytes: &[u8]) -> Result<TaskFile> {
    serde_json::from_slice(bytes)
        .map_err(|e| corrupt(Path::new("tasks.json"), &e, (e.line(), e.column())))
}

fn claim_board(bytes: &[u8]) -> Result<ClaimBoard> {
    ClaimBoard::read(
        "tasks.json".into(),
        bytes.to_vec(),
        Skim::Choosing,
        parse_whole,
    )
}

fn board_for_adding(bytes: &[u8]) -> Result<ClaimBoard> {
    ClaimBoard::read(
        "tasks.json".into(),
        bytes.to_vec(),
        Skim::Adding,
        parse_whole,
    )
}

/// The claims `requests` made on the board `bytes` read for choosing, and on it read whole as
/// any change reads it: the claims and the bytes written must be the same.
fn same_as_whole(bytes: &[u8], requests: &[ClaimRequest]) -> (Vec<Option<Claimed>>, Vec<u8>) {
    let now = Timestamp::now();
    let mut board = claim_board(bytes).unwrap();
    let mut whole = parse_whole(bytes).unwrap();
    let mut claims = Vec::new();
    for request in requests {
        let read = board.claim(request, now, LEASE).unwrap();
        let expected = whole.claim(request, now, LEASE).unwrap();
        assert_eq!(
            serde_json::to_string(&read.as_ref().map(|c| &c.task)).unwrap(),
            serde_json::to_string(&expected.as_ref().map(|c| &c.task)).unwrap()
        );
        claims.push(read);
    }
    let written = board.encode(now).unwrap().to_vec();
    whole.last_updated = Some(now);
    assert_eq!(
        String::from_utf8(written.clone()).unwrap(),
        String::from_utf8(crate::encode(&whole).unwrap()).unwrap()
    );
    (claims, written)
}

#[test]
fn claims_read_for_choosing_take_and_write_what_claims_on_the_whole_board_do() {
    let bytes = board(40);
    let requests: Vec<ClaimRequest> = ["w1", "w2", "w1", "w3"]
        .into_iter()
        .map(ClaimRequest::next)
        .chain([
            ClaimRequest::task("w4", "task-40"),
            ClaimRequest::next("w5").files(Files::Ignore),
        ])
        .collect();
    let (claims, _) = same_as_whole(&bytes, &requests);
    assert!(claims.iter().all(Option::is_some));
    // On a small board too, where the one task taken is a large part of it.
    for n in 1..=3 {
        let (claims, _) = same_as_whole(&board(n), &[ClaimRequest::next("w1")]);
        assert!(claims[0].is_some());
    }
    // The task taken is whole: what a worker is told is everything it was written with.
    let taken = &claims[0].as_ref().unwrap().task;
    assert!(taken.description.starts_with("part ") && taken.context.hints.contains("module"));
    // Nothing ready: no claim, and the board as it was.
    let mut board = claim_board(&board(0)).unwrap();
    assert!(
        board
            .claim(&ClaimRequest::next("w1"), Timestamp::now(), LEASE)
            .unwrap()
            .is_none()
    );
}

#[test]
fn a_reservation_and_an_expired_hold_are_chosen_around_as_on_the_whole_board() {
    let now = Timestamp::now();
    let mut file = parse_whole(&board(12)).unwrap();
    file.claim(&ClaimRequest::task("gone", "task-1"), now, LEASE)
        .unwrap();
    let lease_end = file.task("task-1").unwrap().lease_expires_at.unwrap();
    file.reserve(
        NewReservation {
            agent: "w9".into(),
            paths: vec!["src/part_2.rs".into(), "src/part_4.rs".into()],
            task: None,
            shared: false,
            ttl: None,
            reason: None,
        },
        now,
        LEASE,
    )
    .unwrap();
    let bytes = crate::encode(&file).unwrap();
    let (claims, _) = same_as_whole(
        &bytes,
        &[ClaimRequest::next("w1"), ClaimRequest::next("w2")],
    );
    let ids: Vec<&str> = claims
        .iter()
        .flatten()
        .map(|c| c.task.id.as_str())
        .collect();
    assert!(
        !ids.contains(&"task-2") && !ids.contains(&"task-4"),
        "{ids:?}"
    );
    // Once the holder's lease has run out its task is taken over, on both.
    let mut board = claim_board(&bytes).unwrap();
    let mut whole = parse_whole(&bytes).unwrap();
    let later = lease_end.after(Duration::from_secs(1));
    let read = board
        .claim(&ClaimRequest::task("w1", "task-1"), later, LEASE)
        .unwrap();
    let expected = whole
        .claim(&ClaimRequest::task("w1", "task-1"), later, LEASE)
        .unwrap();
    assert_eq!(read.unwrap().reclaimed_from.as_deref(), Some("gone"));
    assert_eq!(expected.unwrap().reclaimed_from.as_deref(), Some("gone"));
}

/// The board of `n` tasks in both layouts it is read in: Baton's and pretty JSON's.
fn boards(n: usize) -> [String; 2] {
    [board(n), crate::test_boards::pretty_board(n).1].map(|b| String::from_utf8(b).unwrap())
}

/// Task `n`'s description in `text`, as written there.
fn description(text: &str, n: usize) -> String {
    let colon = crate::test_boards::colon(text);
    format!("\"description{colon}\"part {n} — with \\\"quotes\\\" and ünïcode\"")
}

#[test]
fn a_task_passed_over_keeps_its_text_even_when_another_tool_wrote_it_wrong() {
    // Task 7's description is a number: choosing does not read it, so the claim of another
    // task goes on and task 7 is written back as it was; a whole read refuses it, saying
    // where (`leader status`, `leader doctor`).
    for text in boards(9) {
        let colon = crate::test_boards::colon(&text);
        let description = description(&text, 7);
        assert!(text.contains(&description));
        let bytes = text
            .replacen(&description, &format!("\"description{colon}7"), 1)
            .into_bytes();
        assert!(matches!(
            parse_whole(&bytes),
            Err(StoreError::Corrupt { .. })
        ));
        let mut board = claim_board(&bytes).unwrap();
        assert!(board.spans.is_some(), "read task by task");
        let claimed = board.claim(&ClaimRequest::task("w1", "task-1"), Timestamp::now(), LEASE);
        assert_eq!(claimed.unwrap().unwrap().task.id, "task-1");
        let written = String::from_utf8(board.encode(Timestamp::now()).unwrap().to_vec()).unwrap();
        let seventh = |text: &str| {
            let at = text.find(&format!("\"id{colon}\"task-7\"")).unwrap();
            text[at..at + 200].to_string()
        };
        assert_eq!(
            seventh(&written),
            seventh(&String::from_utf8(bytes).unwrap())
        );
    }
}

#[test]
fn the_task_taken_is_refused_when_it_does_not_read_whole_saying_where_in_the_file() {
    for text in boards(9) {
        // Whichever task the claim takes, its description is made a number.
        let whole = parse_whole(text.as_bytes()).unwrap();
        let now = Timestamp::now();
        let next = whole
            .choose(&ClaimRequest::next("w1"), now, LEASE)
            .unwrap()
            .unwrap();
        let n: usize = whole.tasks[next].id["task-".len()..].parse().unwrap();
        let colon = crate::test_boards::colon(&text);
        let bytes = text
            .replacen(&description(&text, n), &format!("\"description{colon}7"), 1)
            .into_bytes();
        let Err(StoreError::Corrupt { line, column, .. }) = parse_whole(&bytes) else {
            panic!("a whole read refuses it");
        };
        let mut board = claim_board(&bytes).unwrap();
        match board.claim(&ClaimRequest::next("w1"), now, LEASE) {
            Err(StoreError::Corrupt {
                line: l,
                column: c,
                path,
                ..
            }) => {
                assert_eq!((l, c), (line, column));
                assert_eq!(path, Path::new("tasks.json"));
            }
            other => panic!("refused, not {other:?}"),
        }
    }
}

#[test]
fn a_board_this_cannot_read_task_by_task_is_read_whole() {
    let bytes = board(6);
    let compact = serde_json::to_vec(&parse_whole(&bytes).unwrap()).unwrap();
    let board = claim_board(&compact).unwrap();
    assert!(board.spans.is_none() && board.whole.iter().all(|&w| w));
    let (claims, written) = same_as_whole(&compact, &[ClaimRequest::next("w1")]);
    assert!(claims[0].is_some());
    assert!(
        written.starts_with(b"{\n  \"version\""),
        "encoded whole, pretty"
    );
    // A status this version does not know: refused as the whole read refuses it.
    let text = String::from_utf8(bytes).unwrap();
    let odd = text.replacen("\"status\":\"available\"", "\"status\":\"waiting\"", 1);
    assert_ne!(odd, text);
    let expected = parse_whole(odd.as_bytes()).unwrap_err().to_string();
    let refused = claim_board(odd.as_bytes())
        .err()
        .expect("refused")
        .to_string();
    assert_eq!(refused, expected);
    assert!(refused.contains("waiting"), "{refused}");
    // Objects in a task laid out by hand as tasks are: the task's text is found cut in two,
    // which does not read as a task, so the board is read whole.
    let pretty = String::from_utf8(crate::test_boards::pretty_board(6).1).unwrap();
    let nested = crate::test_boards::with_objects_laid_out_as_tasks(&pretty);
    let board = claim_board(nested.as_bytes()).unwrap();
    assert!(board.spans.is_none());
    let (claims, written) = same_as_whole(nested.as_bytes(), &[ClaimRequest::next("w1")]);
    assert!(claims[0].is_some());
    assert_eq!(parse_whole(&written).unwrap().tasks.len(), 6);
}

#[test]
fn a_change_to_a_task_read_only_for_choosing_is_never_written() {
    let bytes = board(5);
    let mut board = claim_board(&bytes).unwrap();
    board.file.tasks.get_mut(3).unwrap().status = TaskStatus::Cancelled;
    let refused = board
        .encode(Timestamp::now())
        .err()
        .expect("refused")
        .to_string();
    assert!(refused.contains("read only for choosing"), "{refused}");
    // Any change to the whole list counts as a change to every task.
    let mut board = claim_board(&bytes).unwrap();
    board.file.tasks.iter_mut().for_each(drop);
    assert!(board.encode(Timestamp::now()).is_err());
    // A task read whole first may be changed.
    let mut board = claim_board(&bytes).unwrap();
    board.make_whole(3).unwrap();
    board.file.tasks.get_mut(3).unwrap().priority = 1;
    let written = parse_whole(&board.encode(Timestamp::now()).unwrap().to_vec()).unwrap();
    assert_eq!(written.tasks[3].priority, 1);
    assert!(!written.tasks[3].description.is_empty());
}

#[test]
fn a_task_added_to_the_board_read_for_adding_is_written_as_on_the_whole_board() {
    let bytes = board(30);
    let now = Timestamp::now();
    let new = |id: Option<&str>, dependencies: &[&str]| baton_core::NewTask {
        id: id.map(str::to_string),
        dependencies: dependencies.iter().map(|d| d.to_string()).collect(),
        files: vec!["src/new.rs".into()],
        hints: "the hints of a new task".into(),
        description: "A task added to a large board".into(),
        ..Default::default()
    };
    let mut board = board_for_adding(&bytes).unwrap();
    let mut whole = parse_whole(&bytes).unwrap();
    for (id, dependencies) in [(None, vec!["task-3", "task-30"]), (Some("extra"), vec![])] {
        let added = board
            .file_for_adding()
            .add_task(new(id, &dependencies), now)
            .unwrap()
            .clone();
        let expected = whole.add_task(new(id, &dependencies), now).unwrap();
        assert_eq!(
            serde_json::to_string(&added).unwrap(),
            serde_json::to_string(expected).unwrap()
        );
    }
    // Its id is one past the highest, read from the tasks' ids alone.
    assert_eq!(board.file.tasks[30].id, "task-31");
    let written = board.encode(now).unwrap().to_vec();
    whole.last_updated = Some(now);
    assert_eq!(
        String::from_utf8(written).unwrap(),
        String::from_utf8(crate::encode(&whole).unwrap()).unwrap()
    );
    // What adding checks, it checks on the tasks read for adding: an unknown dependency, a
    // duplicate id.
    let mut board = board_for_adding(&bytes).unwrap();
    let file = board.file_for_adding();
    assert!(file.add_task(new(None, &["task-99"]), now).is_err());
    assert!(file.add_task(new(Some("task-7"), &[]), now).is_err());
    // A board read for adding has no statuses to choose by: a claim on it is refused, and
    // nothing is taken.
    let mut board = board_for_adding(&bytes).unwrap();
    assert!(board.claim(&ClaimRequest::next("w1"), now, LEASE).is_err());
    // Changing a task read for adding is refused when written, as one read for choosing is.
    board.file.tasks.get_mut(2).unwrap().priority = 1;
    assert!(board.encode(now).is_err());
}
