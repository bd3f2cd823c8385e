//! A path an agent names is opened, never checked then followed: the agent writes signals at
//! `d/xN` through its door while a process of its own swaps `d` for a link to a folder outside
//! the project (`renameat2` with `RENAME_EXCHANGE`, in a loop). Before, some writes landed in
//! that folder with the agent's note; now each either lands in its worktree's `d` or is refused
//! as a link in the way, and nothing appears outside.

use super::support;

use support::Project;

support::on_both_stores!(a_folder_swapped_for_a_link_never_leads_a_write_out);

const SWAPPER: &str = r#"import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
while True:
    libc.renameat2(-100, b"d", -100, b"bait", 2)
"#;

fn a_folder_swapped_for_a_link_never_leads_a_write_out(p: Project) {
    support::repository(p.path());
    p.ok(&["leader", "add-task", "Signal", "--id", "t1"]);
    let name = p.path().file_name().unwrap().to_string_lossy().to_string();
    let outside = p.path().with_file_name(format!("{name}-outside"));
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(p.path().join(".git/swap.py"), SWAPPER).unwrap();
    let agent = format!(
        "mkdir -p d && ln -s '{outside}' bait && python3 '{swap}' & swapper=$!; \
         for i in $(seq 1 150); do \
           baton signal write --path d/x$i --note '$(touch {outside}/pwned)' >/dev/null 2>>refusals.txt; \
         done; kill $swapper; wait; \
         true",
        outside = outside.display(),
        swap = p.path().join(".git/swap.py").display(),
    );
    let out = p
        .committing(&["team", "up", "--exec", &agent])
        .output()
        .unwrap();
    support::expect_code("team up", out, 0);
    let landed: Vec<_> = std::fs::read_dir(&outside)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(landed.is_empty(), "writes landed outside: {landed:?}");
    // The loop did race: some writes were refused with the link named as the reason.
    let worktree = p.coordination().join("worktrees/t1");
    let refusals = std::fs::read_to_string(worktree.join("refusals.txt")).unwrap_or_default();
    let written = ["d", "bait"]
        .iter()
        .filter_map(|dir| std::fs::read_dir(worktree.join(dir)).ok())
        .flat_map(|entries| entries.flatten())
        .filter(|e| e.file_name().to_string_lossy().starts_with('x'))
        .count();
    assert!(written > 0, "no write landed in the worktree: {refusals}");
    let _ = std::fs::remove_dir_all(&outside);
}
