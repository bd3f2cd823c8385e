//! An agent sees only its own: through its door `baton --json watch` streams the board and the
//! project's shared state but not another agent's transcript, messages or questions, `baton
//! logs` (and `--follow`) reads its own log, not another agent's, and `baton team logs` its own
//! transcripts. Before, `watch` streamed every agent's
//! transcript and messages to the lead.

use super::support;

use support::Project;

support::on_both_stores!(an_agent_watching_sees_no_other_agents_records);

/// t1's agent watches; t2's agent, once t1's says it is watching, prints a line into its
/// transcript and sends the lead a message, each carrying a canary, then signals it is done.
const AGENT: &str = r#"if [ "$BATON_TASK_ID" = t1 ]; then
  baton --json watch > watch.jsonl 2> watch.err & watcher=$!
  n=0; until grep -q watching watch.err || [ $n -gt 600 ]; do sleep 0.1; n=$((n+1)); done
  baton signal write a-watching > /dev/null
  n=0; until grep -q b-done watch.jsonl || [ $n -gt 600 ]; do sleep 0.1; n=$((n+1)); done
  kill $watcher
  other=$(echo "$BATON_AGENT" | sed 's/1$/X/; s/2$/1/; s/X$/2/')
  baton logs "$other" > logs.txt 2>&1
  echo "logs exit $?" >> logs.txt
  timeout 20 baton logs "$other" --follow > follow.txt 2>&1
  echo "follow exit $?" >> follow.txt
  baton team logs t2 > transcript.txt 2>&1
  echo "transcript exit $?" >> transcript.txt
  git add watch.jsonl logs.txt follow.txt transcript.txt && git commit -qm watched
else
  baton signal wait a-watching --timeout 60s > /dev/null
  echo "TRANSCRIPT-CANARY from $BATON_AGENT"
  baton message send lead Private "MESSAGE-CANARY" > /dev/null
  baton signal write b-done > /dev/null
fi"#;

fn an_agent_watching_sees_no_other_agents_records(p: Project) {
    support::repository(p.path());
    p.ok(&["leader", "add-task", "Watch", "--id", "t1"]);
    p.ok(&["leader", "add-task", "Talk", "--id", "t2"]);
    let out = p
        .committing(&["team", "up", "--workers", "2", "--exec", AGENT])
        .output()
        .unwrap();
    support::expect_code("team up", out, 0);
    let watched = support::git(p.path(), &["show", "baton/t1:watch.jsonl"]);
    // It saw the shared state as it changed (the other agent's signal)...
    assert!(watched.contains("b-done"), "{watched}");
    // ...and none of the other agent's records.
    for canary in ["TRANSCRIPT-CANARY", "MESSAGE-CANARY"] {
        assert!(!watched.contains(canary), "{canary} seen: {watched}");
    }
    let logs_said = support::git(p.path(), &["show", "baton/t1:logs.txt"]);
    assert!(
        logs_said.contains("an agent reads its own") && !logs_said.contains("logs exit 0"),
        "{logs_said}"
    );
    let follow_said = support::git(p.path(), &["show", "baton/t1:follow.txt"]);
    assert!(
        follow_said.contains("an agent reads its own") && !follow_said.contains("follow exit 0"),
        "{follow_said}"
    );
    let transcript_said = support::git(p.path(), &["show", "baton/t1:transcript.txt"]);
    assert!(
        transcript_said.contains("an agent reads its own")
            && !transcript_said.contains("TRANSCRIPT-CANARY"),
        "{transcript_said}"
    );
    // The lead sees them.
    let logs = p.json(&["team", "logs", "t2"]).to_string();
    assert!(logs.contains("TRANSCRIPT-CANARY"), "{logs}");
    let inbox = p.ok(&["--json", "inbox"]);
    assert!(inbox.contains("MESSAGE-CANARY"), "{inbox}");
}
