//! Every resource an agent uses is bounded, and what was cut or refused is said: its
//! transcript keeps at most the profile's `max_transcript_mb` (then says it cut), its `/tmp`
//! holds at most `sandbox.tmp_mb`, its door folder (on the lead's disk) takes nothing, and its
//! processes may open at most `sandbox.max_open_files` files. Before, one attempt wrote a
//! 473 MB transcript, 3 GB to `/tmp` (the host's memory), and anything to the door folder.

use super::support;

use support::Project;

support::on_both_stores!(an_agents_transcript_tmp_door_folder_and_open_files_are_bounded);

fn an_agents_transcript_tmp_door_folder_and_open_files_are_bounded(p: Project) {
    support::repository(p.path());
    p.ok(&["leader", "add-task", "Fill everything", "--id", "t1"]);
    std::fs::create_dir_all(p.coordination().join("team")).unwrap();
    std::fs::write(
        p.coordination().join("team/profiles.toml"),
        "[profiles.exec]\nmax_transcript_mb = 1\n\
         [profiles.exec.sandbox]\ntmp_mb = 16\nmax_open_files = 512\n",
    )
    .unwrap();
    let agent = "try() { if sh -c \"$2\" >/dev/null 2>&1; then echo \"$1: DONE\"; else echo \"$1: refused\"; fi; }; \
         { try tmp 'head -c 64000000 /dev/zero > /tmp/big'; \
           try door 'echo x > /tmp/baton/planted'; \
           echo \"open-files: $(ulimit -n)\"; } > bounds.txt; \
         git add bounds.txt && git commit -qm bounds; \
         pad=$(head -c 400 /dev/zero | tr '\\0' x); \
         i=0; while [ $i -lt 20000 ]; do echo \"line $i $pad\"; i=$((i+1)); done";
    let out = p
        .committing(&["team", "up", "--exec", agent])
        .output()
        .unwrap();
    support::expect_code("team up", out, 0);
    let said = support::git(p.path(), &["show", "baton/t1:bounds.txt"]);
    assert!(said.contains("tmp: refused"), "{said}");
    assert!(said.contains("door: refused"), "{said}");
    assert!(said.contains("open-files: 512"), "{said}");
    // Lines of 400 bytes: the first 10,000 events `team logs` shows hold the cut.
    let logs = p.json(&["team", "logs", "t1"]);
    let text = logs.to_string();
    assert!(
        text.contains("the transcript keeps 1 MiB (the profile's max_transcript_mb)"),
        "{}",
        &text[text.len().saturating_sub(2000)..]
    );
    let kept = logs["events"].as_array().map_or(0, Vec::len);
    assert!((2000..4000).contains(&kept), "{kept} events kept");
    let door = p.coordination().join("team/doors/t1/planted");
    assert!(!door.exists());
}
