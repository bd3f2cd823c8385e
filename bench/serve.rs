//! `baton serve` benchmark (run with `cargo bench --bench serve`): the release `baton` serving a
//! 1,000-task project to a phone-sized Chromium driven through Playwright
//! (`tests/clients/served_ui.mjs`).
//!
//! Prints:
//! - the page's first load at phone size on loopback (from `goto` to the board drawn), over 5
//!   loads of a paired page;
//! - 30 times, a worker's `baton` command adding a task and the time until the page draws it
//!   (wall clock, from just before the command starts, so its own run is included: as the
//!   desktop's figure is taken);
//! - `baton serve` idle with 20 pages open (each paired in a browser context of its own, as 20
//!   phones, each with its change feed): its memory (PSS from `/proc/PID/smaps_rollup`) and its
//!   CPU time over 10 seconds.
//!
//! Targets (issue 46): the change on the page p99 ≤ 100 ms (as the desktop's); first load at
//! phone size ≤ 1 s.

use baton_test_support as support;

use std::process::Command;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::json;
use support::Project;
use support::served::{Phone, pairing_path, serve};
use support::stats::report;

fn now_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
        * 1000.0
}

/// `/proc/PID/smaps_rollup`'s PSS, in MB.
fn pss_mb(pid: u32) -> f64 {
    let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap();
    let kb: f64 = rollup
        .lines()
        .find_map(|l| l.strip_prefix("Pss:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kb / 1024.0
}

/// The process's user and system CPU time, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap()
        .split_whitespace()
        .collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

fn main() {
    let p = Project::init();
    let mut file = baton_core::TaskFile::new(baton_core::Timestamp::now());
    for i in 1..=1000 {
        file.add_task(
            baton_core::NewTask {
                description: format!("Implement part {i} of the feature, with tests and docs"),
                priority: 1 + (i % 5) as u32,
                dependencies: Vec::new(),
                files: vec![format!("src/part_{i}.rs")],
                hints: String::new(),
                id: None,
                ..Default::default()
            },
            baton_core::Timestamp::now(),
        )
        .unwrap();
    }
    std::fs::write(
        p.coordination().join("tasks.json"),
        serde_json::to_vec_pretty(&file).unwrap(),
    )
    .unwrap();
    let (serving, base) = serve(&p, &["--pair", "none"]);
    let mut phone = Phone::start(&base);
    let link = p.json(&["serve", "pair"])["link"]
        .as_str()
        .unwrap()
        .to_string();
    let pair_path = pairing_path(&link).to_string();
    phone.run(json!({"do": "open", "path": pair_path}));

    let loads: Vec<Duration> = (0..5)
        .map(|_| {
            let opened = phone.run(json!({"do": "open", "path": "/"}));
            Duration::from_millis(opened["ms"].as_u64().unwrap())
        })
        .collect();
    report("first load at 390x844 (1,000 tasks)", loads);

    // A phone opens on the Inbox: the board shows the tasks.
    phone.run(json!({"do": "view", "name": "board"}));
    let mut changes = Vec::new();
    // Where the time goes: the CLI's run and the feed (to the page's first message), the
    // board's read (from there to the board call's answer), the drawing (to the frame).
    let (mut feed, mut read, mut draw) = (Vec::new(), Vec::new(), Vec::new());
    let ms = |from: f64, to: f64| Duration::from_secs_f64((to - from).max(0.0) / 1000.0);
    for n in 0..30 {
        let text = format!("Pushed change {n}");
        // A long column draws its first 50 cards: the new task shows in the board's counts.
        let available = format!("{} available", 1001 + n);
        phone.run(json!({"do": "arm", "text": available, "testid": "counts"}));
        let start = now_ms();
        p.ok(&["leader", "add-task", &text]);
        let seen = phone.run(json!({"do": "seen"}));
        let at = seen["at"].as_f64().unwrap();
        changes.push(ms(start, at));
        let marks = seen["marks"].as_array().unwrap();
        let first_message = marks
            .iter()
            .find(|m| m["what"] == "feed")
            .and_then(|m| m["at"].as_f64());
        // The board's read that the message started (not one still under way before it).
        let status = first_message.and_then(|message| {
            marks.iter().find(|m| {
                m["path"]
                    .as_str()
                    .is_some_and(|p| p.ends_with("/command/board"))
                    && m["start"].as_f64().is_some_and(|s| s >= message)
            })
        });
        if let (Some(message), Some(status)) = (first_message, status) {
            let answered = status["at"].as_f64().unwrap();
            feed.push(ms(start, message));
            read.push(ms(message, answered));
            draw.push(ms(answered, at));
        }
    }
    report(
        "a CLI's change drawn on the served page (1,000 tasks)",
        changes,
    );
    report("  of which: the CLI's run and the feed to the page", feed);
    report(
        "  of which: the board's read (what changed of 1,000 tasks)",
        read,
    );
    report("  of which: the page drawn after the read", draw);

    let paths: Vec<String> = (0..19)
        .map(|_| {
            let link = p.json(&["serve", "pair"])["link"]
                .as_str()
                .unwrap()
                .to_string();
            pairing_path(&link).to_string()
        })
        .collect();
    let pages = phone.run(json!({"do": "openPages", "paths": paths}));
    let pid = serving.pid();
    std::thread::sleep(Duration::from_secs(3)); // settle after the pages opened
    let before = cpu_ticks(pid);
    std::thread::sleep(Duration::from_secs(10));
    let ticks = cpu_ticks(pid) - before;
    let per_second: f64 = String::from_utf8(
        Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap()
    .trim()
    .parse()
    .unwrap();
    println!(
        "baton serve idle with {} pages open: PSS {:.1} MB, CPU {:.2}% over 10 s",
        pages["pages"],
        pss_mb(pid),
        ticks as f64 / per_second / 10.0 * 100.0
    );
}
