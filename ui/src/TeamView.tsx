import { Button, Checkbox, TextField } from "@radix-ui/themes";
import { useEffect, useRef, useState } from "react";
import { api, call, errorMessage, onChange } from "./api";
import { AGENT_PROFILES } from "./bindings/Defaults";
import type { TeamView as Team } from "./bindings/TeamView";
import type { WorkerView } from "./bindings/WorkerView";
import type { SupervisorInfo } from "./bindings/SupervisorInfo";
import type { QueueEntry } from "./bindings/QueueEntry";
import { Transcript } from "./Transcript";
import { CoordinationCost } from "./CoordinationCost";
import { budgetShare, chartPoints, NOT_READ, queueRows, queueStateText, take, usd, type Followed } from "./team";
import { Skipped } from "./Skipped";
import { StateBadge } from "./StateBadge";
import { useLead } from "./scope";

interface Props {
  /** Bumped on every change from the feed (a worker's record, a task): the team is read again. */
  version: number;
  onError: (message: string | null) => void;
}


/** The supervised team: start, stop and pause it and its workers; each worker's state, task and
 *  cost; the spend over time against the budget; the chosen worker's transcript, following
 *  live as the change feed brings its events. */
export function TeamView({ version, onError }: Props) {
  const [team, setTeam] = useState<Team | null>(null);
  const [chosen, setChosen] = useState<string | null>(null);
  // The chosen worker's task, kept after it finishes (its record then holds none) until the
  // worker takes another, so what it just did stays readable.
  const [shown, setShown] = useState<string | null>(null);

  // Each worker's latest task as seen, so choosing a worker that has finished shows what it did.
  const lastTask = useRef(new Map<string, string>());
  useEffect(() => {
    let current = true;
    call("team_status", {}).then(
      (t) => {
        if (!current) return;
        for (const w of t.workers) if (w.task) lastTask.current.set(w.name, w.task);
        setTeam(t);
      },
      (e: unknown) => onError(errorMessage(e)),
    );
    return () => {
      current = false;
    };
  }, [version, onError]);

  const stop = (worker: string | null, now: boolean) =>
    call("team_stop", { worker, now }).then(
      () => onError(null),
      (e: unknown) => onError(errorMessage(e)),
    );

  const pause = (worker: string, paused: boolean) =>
    call(paused ? "team_pause" : "team_resume", { worker }).then(
      () => onError(null),
      (e: unknown) => onError(errorMessage(e)),
    );

  // Until the lead chooses a worker, the first one at work is shown.
  const worker = team?.workers.find((w) => w.name === chosen) ?? team?.workers.find((w) => w.task !== null) ?? null;
  const working = worker?.task ?? null;
  useEffect(() => {
    if (working) setShown(working);
  }, [working]);

  // For the benchmark: the frame after the team is first drawn.
  const drawn = team !== null;
  useEffect(() => {
    if (!drawn) return;
    const frame = requestAnimationFrame(() => void api.boardPainted());
    return () => cancelAnimationFrame(frame);
  }, [drawn]);
  const lead = useLead();
  if (!team) return <p className="loading">Reading the team…</p>;
  return (
    <section className="team-view" aria-label="Team" data-testid="team-view">
      <Skipped unreadable={team.unreadable} of="the team" />
      {team.last_run && !team.supervisor && (
        <p className={team.last_run.all_done ? "notice" : "notice not-all-done"} role="status" data-testid="last-run">
          The last run (on {team.last_run.host}) ended {new Date(team.last_run.ended_at).toLocaleString()}: {team.last_run.headline}
        </p>
      )}
      {lead && (team.supervisor ? <ResizeForm running={team.supervisor} onError={onError} /> : <StartForm onError={onError} />)}
      <Spend team={team} />
      <div className="table-box">
      <table className="workers" data-testid="workers">
        <caption>Workers</caption>
        <thead>
          <tr>
            <th scope="col">Worker</th>
            <th scope="col">State</th>
            <th scope="col">Task</th>
            <th scope="col">Cost</th>
            <th scope="col">Last event</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {team.workers.map((w) => (
            <WorkerRow
              key={w.name}
              worker={w}
              cost={w.usage.cost_usd}
              chosen={w.name === worker?.name}
              onChoose={() => {
                setChosen(w.name);
                setShown(w.task ?? lastTask.current.get(w.name) ?? null);
              }}
              onStop={stop}
              onPause={pause}
            />
          ))}
        </tbody>
      </table>
      </div>
      {team.workers.length === 0 && <p className="empty">No supervised workers yet: start a team above.</p>}
      {team.merge_queue.length > 0 && <MergeQueueTable entries={team.merge_queue} />}
      <CoordinationCost onError={onError} />
      {team.supervisor && lead && (
        <p>
          <Button variant="soft" data-testid="stop-team" onClick={() => void stop(null, false)}>
            Stop the team after its tasks
          </Button>{" "}
          <Button variant="soft" color="red" data-testid="stop-team-now" onClick={() => void stop(null, true)}>
            Stop now
          </Button>
        </p>
      )}
      {shown && <WorkerTranscript key={shown} task={shown} cost={team.spend.by_task[shown]?.cost_usd ?? 0} onError={onError} />}
    </section>
  );
}

function WorkerRow({
  worker,
  cost,
  chosen,
  onChoose,
  onStop,
  onPause,
}: {
  worker: WorkerView;
  cost: number;
  chosen: boolean;
  onChoose: () => void;
  onStop: (worker: string, now: boolean) => void;
  /** Pause the worker (or the planner): it starts nothing new; false: resume it. */
  onPause: (worker: string, paused: boolean) => void;
}) {
  const paused = worker.state === "paused";
  const here = worker.supervisor_alive === true && worker.state !== "stopped";
  return (
    <tr data-testid={`worker-${worker.name}`} className={chosen ? "chosen" : undefined}>
      <th scope="row">
        <Button size="1" variant="soft" onClick={onChoose} aria-pressed={chosen} data-testid={`show-${worker.name}`}>
          {worker.name}
        </Button>{" "}
        <span className="muted">
          {worker.profile} on {worker.host},{" "}
          <span data-testid={`sandbox-${worker.name}`} className={worker.sandboxed ? undefined : "unsandboxed"}>
            {worker.sandboxed ? "sandboxed" : "no sandbox"}
          </span>
        </span>
      </th>
      <td data-testid={`state-${worker.name}`}>
        <StateBadge worker={worker.state} />
      </td>
      <td>{worker.task ? `${worker.task}${worker.attempt ? ` (attempt ${worker.attempt})` : ""}` : "—"}</td>
      <td>{usd(cost)}</td>
      <td className="last-event">{worker.last_event ?? ""}</td>
      <td>
        {here && (
          <>
            <Button
              size="1"
              variant="soft"
              onClick={() => onPause(worker.name, !paused)}
              aria-label={`${paused ? "Resume" : "Pause"} (${worker.name})`}
              data-testid={`${paused ? "resume" : "pause"}-${worker.name}`}
            >
              {paused ? "Resume" : "Pause"}
            </Button>{" "}
            <Button size="1" variant="soft" onClick={() => onStop(worker.name, false)} aria-label={`Stop (${worker.name}, after its task)`}>
              Stop
            </Button>{" "}
            <Button size="1" variant="soft" onClick={() => onStop(worker.name, true)} aria-label={`Stop now (${worker.name})`}>
              Stop now
            </Button>
          </>
        )}
      </td>
    </tr>
  );
}

/** The running team's size, changed: a second `team up` that names no agent, so it is about
 *  the team that runs whatever its profile (the start form's would be refused). */
function ResizeForm({ running, onError }: { running: SupervisorInfo; onError: (message: string | null) => void }) {
  const [workers, setWorkers] = useState(running.workers);
  const [busy, setBusy] = useState(false);
  const resize = () => {
    setBusy(true);
    api
      .teamUp({ workers, stay: false, worktree: false, no_worktree: false, sandbox: false, no_sandbox: false, planner_answers: false })
      .then(
        () => onError(null),
        (e: unknown) => onError(errorMessage(e)),
      )
      .finally(() => setBusy(false));
  };
  return (
    <form className="team-start" data-testid="team-resize" onSubmit={(e) => (e.preventDefault(), resize())}>
      <span>
        A team of {running.workers} {running.profile} worker{running.workers === 1 ? "" : "s"} runs (pid {running.pid}).
      </span>
      <label>
        Workers <TextField.Root type="number" min={1} max={256} value={workers} onChange={(e) => setWorkers(Number(e.target.value))} data-testid="team-resize-workers" />
      </label>
      <Button variant="solid" type="submit" disabled={busy || workers === running.workers} data-testid="team-resize-up">
        Resize the team
      </Button>
    </form>
  );
}

/** Start a team on this machine. */
function StartForm({ onError }: { onError: (message: string | null) => void }) {
  const [profile, setProfile] = useState("claude");
  const [workers, setWorkers] = useState(2);
  const [exec, setExec] = useState("");
  const [budget, setBudget] = useState("");
  const [stay, setStay] = useState(true);
  // On by default, as for `baton team up`; unticked runs this team with `--no-sandbox`.
  const [sandbox, setSandbox] = useState(true);
  // A goal the team plans itself (`team up --goal`); the lead approves the plan unless told not to.
  const [goal, setGoal] = useState("");
  const [reviewPlan, setReviewPlan] = useState(true);
  const [plannerAnswers, setPlannerAnswers] = useState(false);
  const [busy, setBusy] = useState(false);
  const start = () => {
    setBusy(true);
    const budgetUsd = budget.trim() === "" ? null : Number(budget);
    api
      .teamUp({
        profile,
        workers,
        exec: profile === "exec" && exec.trim() !== "" ? exec : null,
        budget_usd: budgetUsd,
        stay,
        worktree: false,
        no_worktree: false,
        sandbox: false,
        no_sandbox: !sandbox,
        goal: goal.trim() === "" ? null : goal.trim(),
        plan: goal.trim() === "" ? null : reviewPlan ? "review" : "auto",
        planner_answers: goal.trim() !== "" && plannerAnswers,
      })
      .then(
        () => onError(null),
        (e: unknown) => onError(errorMessage(e)),
      )
      .finally(() => setBusy(false));
  };
  return (
    <form className="team-start" data-testid="team-start" onSubmit={(e) => (e.preventDefault(), start())}>
      <label>
        Agent{" "}
        <select value={profile} onChange={(e) => setProfile(e.target.value)} data-testid="team-profile">
          {AGENT_PROFILES.map((p) => (
            <option key={p} value={p}>
              {p}
            </option>
          ))}
        </select>
      </label>
      <label>
        Workers <TextField.Root type="number" min={1} max={256} value={workers} onChange={(e) => setWorkers(Number(e.target.value))} data-testid="team-workers" />
      </label>
      {profile === "exec" && (
        <label>
          Command <TextField.Root value={exec} onChange={(e) => setExec(e.target.value)} placeholder="make test" data-testid="team-exec" />
        </label>
      )}
      <label title="A planner agent turns it into tasks before any worker starts">
        Goal <TextField.Root value={goal} onChange={(e) => setGoal(e.target.value)} placeholder="none: work the board" data-testid="team-goal" />
      </label>
      {goal.trim() !== "" && (
        <label title="The plan waits in the Inbox for your approval; unticked, the workers start on it at once">
          <Checkbox checked={reviewPlan} onCheckedChange={(c) => setReviewPlan(c === true)} data-testid="team-review-plan" /> I approve the plan
        </label>
      )}
      {goal.trim() !== "" && (
        <label title="The planner answers the workers' questions about its plan's tasks; approvals stay yours, and what it leaves waits for you">
          <Checkbox checked={plannerAnswers} onCheckedChange={(c) => setPlannerAnswers(c === true)} data-testid="team-planner-answers" /> The planner answers questions
        </label>
      )}
      <label>
        Budget (USD) <TextField.Root value={budget} onChange={(e) => setBudget(e.target.value)} inputMode="decimal" placeholder="none" data-testid="team-budget" />
      </label>
      <label>
        <Checkbox checked={stay} onCheckedChange={(c) => setStay(c === true)} /> Wait for new tasks
      </label>
      <label title="Each attempt in bubblewrap (the default): it writes its worktree and its own branch only, sees no secrets in the home folder, reaches Baton only as itself, and leaves no process behind">
        <Checkbox checked={sandbox} onCheckedChange={(c) => setSandbox(c === true)} data-testid="team-sandbox" /> In a sandbox
      </label>
      <Button variant="solid" type="submit" disabled={busy} data-testid="team-up">
        Start the team
      </Button>
    </form>
  );
}

/** What the team cost: the total, per agent, over time, and against its budget. */
function Spend({ team }: { team: Team }) {
  const total = team.spend.total.cost_usd;
  const budget = team.supervisor?.budget_usd ?? null;
  const share = budgetShare(total, budget);
  const points = chartPoints(team.timeline, 240, 48);
  return (
    <section className="spend" aria-label="Spend" data-testid="spend">
      <p>
        Spent <strong data-testid="spend-total">{usd(total)}</strong> ({team.spend.total.input_tokens} tokens in, {team.spend.total.output_tokens} out)
        {Object.entries(team.spend.by_agent).map(([agent, u]) => (
          <span key={agent} className="muted">
            {" "}
            · {agent} {usd(u?.cost_usd ?? 0)}
          </span>
        ))}
      </p>
      {points && (
        <svg className="spend-chart" width={240} height={48} role="img" aria-label={`Spend over time, up to ${usd(total)}`} data-testid="spend-chart">
          <polyline points={points} fill="none" stroke="currentColor" strokeWidth={2} />
        </svg>
      )}
      {share !== null && budget !== null && (
        <label className="budget">
          Budget {usd(budget)}{" "}
          <meter min={0} max={1} high={0.8} value={share} data-testid="budget-bar">
            {Math.round(share * 100)}%
          </meter>
        </label>
      )}
    </section>
  );
}

/** The latest attempt at `task`, followed from the change feed: the feed is listened to
 *  first, then the transcript read; pushed events that cannot be taken as they come (a newer
 *  attempt, or some missed before the listening began) are read instead (`take`). */
function WorkerTranscript({ task, cost, onError }: { task: string; cost: number; onError: (message: string | null) => void }) {
  const [followed, setFollowed] = useState<Followed>(NOT_READ);
  useEffect(() => {
    let live = true;
    let state = NOT_READ;
    const apply = (next: Followed) => {
      state = next;
      setFollowed(next);
    };
    const read = () => {
      const same = state.attempt;
      call("team_transcript", { task, attempt: same, after: same === null ? 0 : state.after, limit: 10000 }).then(
        (t) => {
          if (!live) return;
          const next = take(state, t.attempt.attempt, t.events, true);
          if (next !== "read") apply(next);
        },
        (e: unknown) => live && onError(errorMessage(e)),
      );
    };
    const listening = onChange((change) => {
      if (!live || change.event !== "transcript_appended" || change.task !== task) return;
      const next = take(state, change.attempt, change.events, false);
      if (next === "read") {
        // A newer attempt is read whole (attempt null: the latest); a gap from where it was.
        if (change.attempt !== state.attempt) state = { ...state, attempt: null, after: 0 };
        read();
      } else apply(next);
    });
    void listening.then(() => live && read());
    return () => {
      live = false;
      void listening.then((stop) => stop());
    };
  }, [task, onError]);
  const { attempt, entries } = followed;

  // For the benchmark: the frame after the transcript is drawn, first whole, then as it grows.
  const opened = useRef(performance.now());
  const reported = useRef(false);
  useEffect(() => {
    if (attempt === null) return;
    const frame = requestAnimationFrame(() => {
      const last = entries[entries.length - 1];
      void api.timingMark(
        reported.current
          ? `transcript shows ${last && "text" in last ? last.text : "?"}`
          : `transcript opened: ${entries.length} entries in ${(performance.now() - opened.current).toFixed(1)} ms`,
      );
      reported.current = true;
    });
    return () => cancelAnimationFrame(frame);
  }, [attempt, entries]);
  return (
    <section className="worker-transcript" aria-label={`Transcript of ${task}`}>
      <h2>
        {task}
        {attempt !== null && `, attempt ${attempt}`} <span className="muted">({usd(cost)} on this task)</span>
      </h2>
      <Transcript entries={entries} />
    </section>
  );
}

/** The merge queue (`team up --merge auto`): each task's place, or what became of it. */
function MergeQueueTable({ entries }: { entries: QueueEntry[] }) {
  return (
    <div className="table-box">
    <table className="merge-queue" data-testid="merge-queue">
      <caption>Merge queue</caption>
      <thead>
        <tr>
          <th scope="col">Task</th>
          <th scope="col">Done by</th>
          <th scope="col">Place</th>
          <th scope="col">What happened</th>
        </tr>
      </thead>
      <tbody>
        {queueRows(entries).map((row) => (
          <tr key={row.task} data-testid="merge-queue-row" data-state={row.state}>
            <td>{row.task}</td>
            <td>{row.worker}</td>
            <td>{row.place === null ? queueStateText(row.state) : `#${row.place} in line`}</td>
            <td>{row.note}</td>
          </tr>
        ))}
      </tbody>
    </table>
    </div>
  );
}
