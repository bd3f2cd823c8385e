//! Crash safety: writer processes are killed with SIGKILL at random moments, over and over.
//! After every kill, tasks.json must parse, and the killed operation must be either wholly
//! applied or not applied at all, with every other task unchanged.

use baton_test_support as support;

use std::time::{Duration, Instant};

use serde_json::Value;
use support::Project;

const KILLS: usize = 120;

fn lcg(seed: &mut u64) -> u64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *seed >> 33
}

/// The tasks array without the fields every write touches.
fn tasks_of(file: &Value) -> Vec<Value> {
    file["tasks"].as_array().unwrap().clone()
}

#[test]
fn sigkill_at_random_moments_never_tears_or_half_applies_an_operation() {
    let p = Project::init();
    // A large file makes each write take long enough for kills to land inside it.
    let big = serde_json::json!({
        "version": "1.0",
        "tasks": (0..3000).map(|i| serde_json::json!({
            "id": format!("seed-{i}"), "description": "x".repeat(200), "status": "done", "priority": 5,
        })).collect::<Vec<_>>(),
    });
    std::fs::write(p.coordination().join("tasks.json"), big.to_string()).unwrap();

    // Calibrate: kills are spread over the time one uninterrupted operation takes here (the
    // slowest of three), and re-aimed below when the machine turns out busier or quieter.
    let slowest = (0..3)
        .map(|n| {
            let started = Instant::now();
            let id = format!("calibration-{n}");
            p.ok(&["leader", "add-task", "calibration", "--id", &id]);
            started.elapsed()
        })
        .max()
        .unwrap();
    let mut window = slowest.as_micros() as u64 * 13 / 10;
    eprintln!("one add-task takes up to {slowest:?}; killing within {window} µs");

    let mut seed = 42;
    let (mut applied, mut not_applied) = (0, 0);
    for i in 0..KILLS {
        let before = p.tasks_json();
        let adding = i % 2 == 0;
        let id = format!("crash-{i}");
        let args: Vec<String> = if adding {
            vec![
                "leader".into(),
                "add-task".into(),
                format!("task number {i}"),
                "--id".into(),
                id.clone(),
            ]
        } else {
            vec!["worker".into(), "claim".into(), format!("killer-{i}")]
        };
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut child = p
            .command(&args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let delay = Duration::from_micros(lcg(&mut seed) % window);
        let until = Instant::now() + delay;
        while Instant::now() < until {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::hint::spin_loop();
        }
        let _ = child.kill(); // SIGKILL on Unix
        child.wait().unwrap();

        let after: Value = serde_json::from_slice(&p.tasks_bytes())
            .unwrap_or_else(|e| panic!("kill {i}: tasks.json torn: {e}"));
        let (old, new) = (tasks_of(&before), tasks_of(&after));
        if adding {
            if new.len() == old.len() {
                assert_eq!(new, old, "kill {i}: no task added, so nothing may change");
                not_applied += 1;
            } else {
                assert_eq!(new.len(), old.len() + 1, "kill {i}");
                assert_eq!(
                    new[..old.len()],
                    old[..],
                    "kill {i}: existing tasks unchanged"
                );
                let added = &new[old.len()];
                assert_eq!(added["id"], id.as_str());
                assert_eq!(added["description"], format!("task number {i}"));
                assert_eq!(added["status"], "available");
                applied += 1;
            }
        } else {
            let changed: Vec<usize> = (0..old.len()).filter(|&k| old[k] != new[k]).collect();
            assert_eq!(new.len(), old.len(), "kill {i}: claims add no tasks");
            match changed.as_slice() {
                [] => not_applied += 1,
                [k] => {
                    assert_eq!(old[*k]["status"], "available", "kill {i}");
                    assert_eq!(new[*k]["status"], "claimed", "kill {i}");
                    assert_eq!(new[*k]["claimed_by"], format!("killer-{i}"), "kill {i}");
                    assert!(
                        new[*k]["lease_expires_at"].is_string(),
                        "kill {i}: claim wholly recorded"
                    );
                    applied += 1;
                }
                many => panic!("kill {i}: one claim changed {} tasks", many.len()),
            }
        }
        // Every ten kills, re-aim: when none has yet landed after the commit, the window is
        // too short for this machine now (it is busier than at calibration); when none has
        // landed before it, too long.
        if i % 10 == 9 {
            if applied == 0 {
                window *= 2;
            } else if not_applied == 0 {
                window = (window / 2).max(1);
            }
        }
    }
    eprintln!("{KILLS} kills: {applied} operations applied whole, {not_applied} not applied");
    assert_eq!(applied + not_applied, KILLS);
    assert!(
        applied > 0 && not_applied > 0,
        "kills should land both before and after the commit ({applied}/{not_applied})"
    );

    // The lock was never left held by a dead process, and doctor cleans any debris.
    p.ok(&["leader", "doctor", "--fix"]);
    let leftovers: Vec<_> = std::fs::read_dir(p.coordination())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".baton-tmp"))
        .collect();
    assert!(leftovers.is_empty(), "doctor --fix removes temp files");
}
