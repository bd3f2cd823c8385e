#!/usr/bin/env python3
"""Baseline for bench/claim.rs: a straightforward Python claim in the manner of the source
design's coordination.py (one process per claim, a lock file taken with flock, tasks.json read
and rewritten in place). Exit 0 when a task was claimed, 3 when none was ready.

Written for the comparison only; Baton does not use it.
"""
import fcntl
import json
import sys
from datetime import datetime
from pathlib import Path

TASKS = Path(".coordination/tasks.json")
LOCK = Path(".coordination/tasks.json.lock")


def main() -> int:
    agent = sys.argv[1]
    LOCK.touch(exist_ok=True)
    with open(LOCK, "r+") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        data = json.loads(TASKS.read_text())
        done = {t["id"] for t in data["tasks"] if t["status"] == "done"}
        ready = [
            t for t in data["tasks"]
            if t["status"] == "available" and all(d in done for d in t.get("dependencies") or [])
        ]
        if not ready:
            return 3
        ready.sort(key=lambda t: (t.get("priority", 5), t.get("created_at", "")))
        task = ready[0]
        task["status"] = "claimed"
        task["claimed_by"] = agent
        task["claimed_at"] = datetime.now().isoformat()
        data["last_updated"] = datetime.now().isoformat()
        TASKS.write_text(json.dumps(data, indent=2) + "\n")
        fcntl.flock(lock.fileno(), fcntl.LOCK_UN)
    return 0


if __name__ == "__main__":
    sys.exit(main())
