//! Text from agents is inert on the lead's terminal: a file an agent commits under a name that
//! holds a C1 control (CSI, which a terminal acts on) and a right-to-left override, and a message
//! to the lead whose subject holds an override, reach `baton review` and `baton inbox` written
//! out (`\u{009b}`, `\u{202e}`), never raw. Before, the file name reached the terminal raw.

use super::support;

use support::Project;

support::on_both_stores!(an_agents_file_names_and_messages_reach_the_terminal_inert);

fn an_agents_file_names_and_messages_reach_the_terminal_inert(p: Project) {
    support::repository(p.path());
    p.ok(&["leader", "add-task", "Name a file", "--id", "t1"]);
    // C1 CSI (U+009B) then `31m`, and U+202E: in UTF-8, as a shell writes them.
    let agent = r#"name=$(printf 'x\302\23331mred\342\200\256gnp.txt'); echo hi > "$name"; \
        git add "$name" && git commit -qm named && \
        baton message send lead "$(printf 'done \342\200\256gnp.exe')" "see the file""#;
    let out = p
        .committing(&["team", "up", "--exec", agent])
        .output()
        .unwrap();
    support::expect_code("team up", out, 0);
    let review = p.ok(&["review", "t1"]);
    let inbox = p.ok(&["inbox", "--all"]);
    for (what, text) in [("review", &review), ("inbox", &inbox)] {
        assert!(
            !text.contains('\u{9b}') && !text.contains('\u{202e}'),
            "{what} printed a raw control: {text:?}"
        );
        assert!(text.contains("\\u{202e}"), "{what}: {text}");
    }
    assert!(review.contains("\\u{009b}31mred"), "{review}");
}
