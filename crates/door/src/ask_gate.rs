//! How many of an attempt's refused connections may wait for the lead at once. A sandboxed
//! agent with `sandbox.ask` can open hundreds of connections in a moment (the proxy takes 256),
//! and each outside its allow-list would become a question in the lead's inbox, faster than the
//! inbox's own limit counts them. So the door lets one question per host and port wait at a
//! time (another connection to it waits for the same answer) and at most [`MAX_WAITING`]
//! targets; a connection beyond that is refused at once, saying why, without asking.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};

/// The most targets one attempt may have waiting for the lead's answer at once.
pub const MAX_WAITING: usize = 4;

/// An answer: `Ok` when the connection may go through, else why not.
type Verdict = Result<(), String>;

/// One question waiting, and its answer once given.
#[derive(Default)]
struct Waiting {
    answer: Mutex<Option<Verdict>>,
    given: Condvar,
}

/// The questions of one attempt waiting for the lead.
#[derive(Default)]
pub struct AskGate {
    waiting: Mutex<HashMap<String, Arc<Waiting>>>,
}

impl AskGate {
    /// The answer about `target`: asked with `ask` when nothing about it waits yet and fewer
    /// than [`MAX_WAITING`] targets do; the answer already being waited for when one does;
    /// refused without asking when too many wait.
    pub fn ask(&self, target: &str, ask: impl FnOnce() -> Verdict) -> Verdict {
        let (waiting, mine) = {
            let mut all = self.waiting.lock().expect("ask gate lock");
            match all.get(target) {
                Some(waiting) => (waiting.clone(), false),
                None if all.len() >= MAX_WAITING => {
                    return Err(format!(
                        "{MAX_WAITING} connections wait for the lead's answer already; this one \
                         was refused without asking"
                    ));
                }
                None => {
                    let waiting = Arc::new(Waiting::default());
                    all.insert(target.to_string(), waiting.clone());
                    (waiting, true)
                }
            }
        };
        if mine {
            let verdict = ask();
            *waiting.answer.lock().expect("ask gate lock") = Some(verdict.clone());
            self.waiting.lock().expect("ask gate lock").remove(target);
            waiting.given.notify_all();
            return verdict;
        }
        let mut answer = waiting.answer.lock().expect("ask gate lock");
        while answer.is_none() {
            answer = waiting.given.wait(answer).expect("ask gate lock");
        }
        answer.clone().expect("an answer was given")
    }
}

#[cfg(test)]
impl AskGate {
    /// How many hold the question about `target`: the gate, its asker and those waiting.
    fn sharing(&self, target: &str) -> usize {
        self.waiting
            .lock()
            .expect("ask gate lock")
            .get(target)
            .map_or(0, Arc::strong_count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc::channel;

    #[test]
    fn one_question_per_target_and_a_few_targets_at_once() {
        let gate = Arc::new(AskGate::default());
        let asked = Arc::new(AtomicUsize::new(0));
        let (release_tx, release_rx) = channel::<()>();
        let release_rx = Arc::new(Mutex::new(release_rx));
        let (started_tx, started_rx) = channel::<()>();
        // MAX_WAITING targets asked about, each answered only when released.
        let mut threads = Vec::new();
        for n in 0..MAX_WAITING {
            let (gate, asked, release, started) = (
                gate.clone(),
                asked.clone(),
                release_rx.clone(),
                started_tx.clone(),
            );
            threads.push(std::thread::spawn(move || {
                gate.ask(&format!("host:{n}"), || {
                    asked.fetch_add(1, Ordering::SeqCst);
                    started.send(()).unwrap();
                    release.lock().unwrap().recv().unwrap();
                    Ok(())
                })
            }));
        }
        for _ in 0..MAX_WAITING {
            started_rx.recv().unwrap();
        }
        // A fifth target is refused without asking.
        let refused = gate.ask("host:other", || panic!("asked beyond the limit"));
        assert!(refused.unwrap_err().contains("without asking"));
        // A second connection to a waiting target waits for the same answer.
        let same = {
            let gate = gate.clone();
            std::thread::spawn(move || gate.ask("host:0", || panic!("asked twice")))
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while gate.sharing("host:0") < 3 {
            assert!(
                std::time::Instant::now() < deadline,
                "the second never waited"
            );
            std::thread::yield_now();
        }
        for _ in 0..MAX_WAITING {
            release_tx.send(()).unwrap();
        }
        for thread in threads {
            assert_eq!(thread.join().unwrap(), Ok(()));
        }
        assert_eq!(same.join().unwrap(), Ok(()), "the same answer");
        assert_eq!(asked.load(Ordering::SeqCst), MAX_WAITING);
        // Answered, a target may be asked about again.
        assert_eq!(gate.ask("host:0", || Err("no".into())), Err("no".into()));
    }
}
