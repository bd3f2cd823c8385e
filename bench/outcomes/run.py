#!/usr/bin/env python3
"""Outcomes: one agent given a whole goal against a Baton team that plans, works and judges it.

For each small repository in bench/outcomes/repos/ (its goal in goal.md, its starting files in
project/, tests the agents never see in hidden/), in a fresh git checkout each time:

- single: the goal as one task, worked by one agent (`baton team up --workers 1`), landed by
  the merge queue;
- team: `baton team up --goal GOAL --plan auto --judge PROFILE --workers N --merge auto`: a
  planner plans it, workers work the tasks, the judge reads each before it lands and checks the
  goal at the end.

Then the hidden tests are copied in and run (python3 -m unittest), and it prints, per
repository and mode and in total: hidden tests passed, wall time, cost (what the team's
records say its agents spent) and the coordination share (the share of tokens spent planning
and judging, from `baton team report`).

The agents are real and cost money: give the profile's API key in the environment as for any
team (`[profiles.NAME.sandbox] env` passes it into the sandbox). The suite smoke-tests this
script with scripted models (tests/outcomes.rs); its numbers need real ones.

    python3 bench/outcomes/run.py --agent claude --workers 2 --budget-usd 5
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPOS = os.path.join(HERE, "repos")
MODES = ("single", "team")
IDENTITY = {
    "GIT_AUTHOR_NAME": "baton-outcomes",
    "GIT_AUTHOR_EMAIL": "outcomes@baton.invalid",
    "GIT_COMMITTER_NAME": "baton-outcomes",
    "GIT_COMMITTER_EMAIL": "outcomes@baton.invalid",
}


def say(text):
    print(text, file=sys.stderr, flush=True)


def run(args, cwd, env, timeout=None, stdin=subprocess.DEVNULL):
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, stdin=stdin)


def must(args, cwd, env):
    done = run(args, cwd, env)
    if done.returncode != 0:
        raise SystemExit(f"outcomes: {' '.join(args)} failed ({done.returncode}):\n"
                         f"{done.stdout}{done.stderr}")
    return done.stdout


def checkout(repo, into, env):
    """The repository's starting files in a fresh git checkout with a Baton project."""
    work = os.path.join(into, "work")
    shutil.copytree(os.path.join(REPOS, repo, "project"), work)
    must(["git", "init", "-q", "-b", "main"], work, env)
    must(["git", "add", "-A"], work, env)
    must(["git", "commit", "-qm", "start"], work, env)
    return work


def last_json(text):
    """A command's --json answer: `text` whole when it is one JSON object (printed across
    lines), else its last line that is one (after a stream of events, one per line)."""
    try:
        value = json.loads(text)
        if isinstance(value, dict):
            return value
    except ValueError:
        pass
    for line in reversed(text.strip().splitlines()):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def hidden_tests(repo, work, env):
    """(passed, total) of the repository's hidden tests, run in `work`."""
    hidden = os.path.join(REPOS, repo, "hidden")
    total = 0
    for name in sorted(os.listdir(hidden)):
        if name.endswith(".py"):
            shutil.copy(os.path.join(hidden, name), work)
            with open(os.path.join(hidden, name)) as f:
                total += len(re.findall(r"^\s+def test_", f.read(), re.M))
    done = run([sys.executable, "-m", "unittest", "discover", "-v", "-s", ".", "-p",
                "test_hidden_*.py"], work, env, timeout=300)
    passed = len(re.findall(r"\.\.\. ok$", done.stderr, re.M))
    return passed, total


def coordination_share(work, baton, env):
    """The share of the run's tokens its planner and judge spent (None when none were counted)."""
    report = last_json(run([baton, "--json", "team", "report"], work, env).stdout) or {}
    shares = [r.get("token_share") for r in report.get("roles", [])
              if r.get("role") in ("planning", "judging")]
    if all(s is None for s in shares):
        return None
    return sum(s or 0.0 for s in shares)


def one_run(repo, mode, options, env):
    """One repository in one mode, from a fresh checkout to its hidden tests' count."""
    with open(os.path.join(REPOS, repo, "goal.md")) as f:
        goal = " ".join(f.read().split())
    scratch = tempfile.mkdtemp(prefix=f"baton-outcomes-{repo}-{mode}-")
    work = checkout(repo, scratch, env)
    baton = options.baton
    must([baton, "leader", "init", f"outcomes: {repo}"], work, env)
    if options.profiles:
        os.makedirs(os.path.join(work, ".coordination", "team"), exist_ok=True)
        shutil.copy(options.profiles, os.path.join(work, ".coordination", "team", "profiles.toml"))
    up = [baton, "--json", "team", "up", "--agent", options.agent, "--merge", "auto"]
    if options.budget_usd is not None:
        up += ["--budget-usd", str(options.budget_usd)]
    if mode == "single":
        must([baton, "leader", "add-task", goal, "--id", "goal"], work, env)
        up += ["--workers", "1"]
    else:
        up += ["--workers", str(options.workers), "--goal", goal, "--plan", "auto",
               "--judge", options.judge or options.agent]
        if options.planner:
            up += ["--planner", options.planner]
    say(f"outcomes: {repo} ({mode}) in {work} ...")
    started = time.monotonic()
    team = run(up, work, env, timeout=options.timeout_minutes * 60)
    wall = time.monotonic() - started
    report = last_json(team.stdout) or {}
    passed, total = hidden_tests(repo, work, env)
    result = {
        "repo": repo,
        "mode": mode,
        "exit_code": team.returncode,
        "hidden_passed": passed,
        "hidden_total": total,
        "wall_secs": round(wall, 2),
        "cost_usd": report.get("spent_usd"),
        "coordination_share": coordination_share(work, baton, env),
    }
    say(f"outcomes: {repo} ({mode}): {passed}/{total} hidden tests passed in {wall:.1f} s "
        f"(team up exited {team.returncode})")
    if options.keep:
        result["folder"] = work
    else:
        shutil.rmtree(scratch, ignore_errors=True)
    return result


def table(results):
    rows = [("repository", "mode", "hidden passed", "wall s", "cost $", "coordination")]
    for r in results:
        cost = "-" if r["cost_usd"] is None else f"{r['cost_usd']:.4f}"
        share = "-" if r["coordination_share"] is None else f"{r['coordination_share']:.0%}"
        rows.append((r["repo"], r["mode"], f"{r['hidden_passed']}/{r['hidden_total']}",
                     f"{r['wall_secs']:.1f}", cost, share))
    for mode in MODES:
        mine = [r for r in results if r["mode"] == mode]
        if not mine:
            continue
        costs = [r["cost_usd"] for r in mine if r["cost_usd"] is not None]
        rows.append(("total", mode,
                     f"{sum(r['hidden_passed'] for r in mine)}/"
                     f"{sum(r['hidden_total'] for r in mine)}",
                     f"{sum(r['wall_secs'] for r in mine):.1f}",
                     f"{sum(costs):.4f}" if costs else "-", ""))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip()
                     for row in rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent", default="claude",
                        help="the profile every seat runs (default: claude)")
    parser.add_argument("--planner", help="the planner's profile (default: --agent)")
    parser.add_argument("--judge", help="the judge's profile (default: --agent)")
    parser.add_argument("--workers", type=int, default=2, help="the team's workers (default: 2)")
    parser.add_argument("--repos", help="comma-separated repositories (default: all)")
    parser.add_argument("--modes", default="single,team", help="single, team or both")
    parser.add_argument("--budget-usd", type=float, help="each run's budget, in US dollars")
    parser.add_argument("--profiles", help="a profiles.toml to give each run's project")
    parser.add_argument("--timeout-minutes", type=float, default=60,
                        help="how long one run may take (default: 60)")
    parser.add_argument("--baton", default=shutil.which("baton") or "baton",
                        help="the baton program (default: the one on PATH)")
    parser.add_argument("--keep", action="store_true", help="keep each run's folder")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    options = parser.parse_args()

    repos = sorted(os.listdir(REPOS))
    if options.repos:
        asked = options.repos.split(",")
        unknown = [r for r in asked if r not in repos]
        if unknown:
            parser.error(f"no repository {', '.join(unknown)} (there are: {', '.join(repos)})")
        repos = asked
    modes = options.modes.split(",")
    if any(m not in MODES for m in modes):
        parser.error(f"--modes takes {' and '.join(MODES)}")
    env = dict(os.environ, **IDENTITY)
    for variable in ("BATON_DIR", "BATON_AGENT", "BATON_TASK_ID"):
        env.pop(variable, None)

    results = [one_run(repo, mode, options, env) for repo in repos for mode in modes]
    print(json.dumps(results, indent=2) if options.json else table(results))


if __name__ == "__main__":
    main()
