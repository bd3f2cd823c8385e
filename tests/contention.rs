//! Contention: 8 worker processes claim, start and complete tasks from a queue of 300 with
//! dependencies until nothing is left, while a reader checks that tasks.json always parses.
//! Every task must be claimed exactly once, and never before its dependencies were done.

use baton_test_support as support;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use serde_json::Value;
use support::Project;

const TASKS: usize = 300;
const WORKERS: usize = 8;

/// Deterministic pseudo-random numbers, so a failure can be replayed.
fn lcg(seed: &mut u64) -> u64 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *seed >> 33
}

#[test]
fn eight_workers_claim_every_task_exactly_once_in_dependency_order() {
    let p = Project::init();
    let mut seed = 7;
    let mut deps: HashMap<String, Vec<String>> = HashMap::new();
    for i in 1..=TASKS {
        let mut mine: Vec<String> = Vec::new();
        if i > 10 {
            for _ in 0..(lcg(&mut seed) % 3) {
                let dep = format!("task-{}", 1 + lcg(&mut seed) as usize % (i - 1));
                if !mine.contains(&dep) {
                    mine.push(dep);
                }
            }
        }
        let priority = (1 + lcg(&mut seed) % 5).to_string();
        let mut args = vec!["leader", "add-task", "work", "-p", &priority];
        let joined = mine.join(",");
        if !mine.is_empty() {
            args.extend(["--depends", &joined]);
        }
        p.ok(&args);
        deps.insert(format!("task-{i}"), mine);
    }

    let finished = AtomicBool::new(false);
    let parses = AtomicUsize::new(0);
    let claims: Vec<(String, String)> = std::thread::scope(|s| {
        let reader = s.spawn(|| {
            let path = p.coordination().join("tasks.json");
            while !finished.load(Ordering::Relaxed) {
                let bytes = std::fs::read(&path).unwrap();
                let parsed: Value = serde_json::from_slice(&bytes)
                    .unwrap_or_else(|e| panic!("torn read of tasks.json: {e}"));
                assert_eq!(parsed["tasks"].as_array().unwrap().len(), TASKS);
                parses.fetch_add(1, Ordering::Relaxed);
            }
        });
        let workers: Vec<_> = (0..WORKERS)
            .map(|w| {
                let p = &p;
                s.spawn(move || {
                    let agent = format!("w{w}");
                    let mut mine = Vec::new();
                    loop {
                        let out = p.run(&["worker", "claim", &agent, "--json"]);
                        let body: Value = serde_json::from_slice(&out.stdout).unwrap();
                        match out.status.code() {
                            Some(0) => {
                                let id = body["task"]["id"].as_str().unwrap().to_string();
                                p.ok(&["worker", "start", &agent, &id]);
                                p.ok(&["worker", "complete", &agent, &id, "done"]);
                                mine.push((agent.clone(), id));
                            }
                            Some(3) if body["reason"] == "every task is finished" => return mine,
                            Some(3) => std::thread::yield_now(),
                            other => panic!(
                                "claim exited {other:?}: {}",
                                String::from_utf8_lossy(&out.stderr)
                            ),
                        }
                    }
                })
            })
            .collect();
        let all = workers
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        finished.store(true, Ordering::Relaxed);
        reader.join().unwrap();
        all
    });

    let ids: HashSet<&String> = claims.iter().map(|(_, id)| id).collect();
    assert_eq!(claims.len(), TASKS, "claims counted by workers");
    assert_eq!(ids.len(), TASKS, "no task claimed twice");
    let workers_used: HashSet<&String> = claims.iter().map(|(w, _)| w).collect();
    assert!(
        workers_used.len() > 1,
        "contention needs more than one active worker"
    );

    let file = p.tasks_json();
    let tasks: HashMap<&str, &Value> = file["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["id"].as_str().unwrap(), t))
        .collect();
    for (id, task) in &tasks {
        assert_eq!(task["status"], "done", "{id}");
        assert_eq!(task["attempts"], 1, "{id} claimed once");
        let claimed_at = task["claimed_at"].as_str().unwrap();
        for dep in &deps[*id] {
            let dep_done = tasks[dep.as_str()]["completed_at"].as_str().unwrap();
            // Same-width RFC 3339 UTC strings compare in time order.
            assert!(
                dep_done <= claimed_at,
                "{id} claimed at {claimed_at} before {dep} was done at {dep_done}"
            );
        }
    }
    assert!(parses.load(Ordering::Relaxed) > 0, "the reader ran");
    eprintln!(
        "{} concurrent parses of tasks.json, all whole",
        parses.load(Ordering::Relaxed)
    );
}
