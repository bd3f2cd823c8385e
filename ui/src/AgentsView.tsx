import { Button } from "@radix-ui/themes";
import { useEffect, useRef, useState } from "react";
import { api, errorMessage } from "./api";
import { useChangeCount } from "./changes";
import { lastHeard, leftText, withoutTime } from "./agents";
import { StateBadge } from "./StateBadge";
import type { AgentRow } from "./bindings/AgentRow";
import type { Team } from "./bindings/Team";

interface Props {
  onError: (message: string | null) => void;
  /** Shows a task on the board. */
  onShowTask: (id: string) => void;
  onChanged: () => void;
}

/** One row per agent: what it is doing, the task it holds and its lease, when it was last
 *  heard from, what it did last, and what it finished. Live from the change feed; between
 *  changes, redrawn when a row's state changes by time alone (a lease running out), which the
 *  library says when. */
export function AgentsView({ onError, onShowTask, onChanged }: Props) {
  // Every change may touch a row (a claim, a log line, a heartbeat, a worker's record): the
  // rows are read again at once, beside the board's own read rather than after it.
  const version = useChangeCount();
  const [team, setTeam] = useState<Team | null>(null);
  const [tick, setTick] = useState(0);
  const [logOf, setLogOf] = useState<string | null>(null);
  const [log, setLog] = useState<string[]>([]);

  useEffect(() => {
    let current = true;
    api.team().then(
      (t) => current && setTeam(t),
      (e: unknown) => onError(errorMessage(e)),
    );
    return () => {
      current = false;
    };
  }, [version, tick, onError]);

  // For the benchmark: the frame after the first draw, and after each redraw for a change.
  const draws = useRef(0);
  useEffect(() => {
    if (!team) return;
    draws.current += 1;
    const first = draws.current === 1;
    const frame = requestAnimationFrame(() => void (first ? api.boardPainted() : api.boardUpdated()));
    return () => cancelAnimationFrame(frame);
  }, [team]);

  // No polling: one timer, to the next moment a row changes without a write.
  const next = team?.next_change_at ?? null;
  useEffect(() => {
    if (!next) return;
    const wait = Math.max(0, Date.parse(next) - Date.now()) + 50;
    const timer = setTimeout(() => setTick((t) => t + 1), wait);
    return () => clearTimeout(timer);
  }, [next]);

  useEffect(() => {
    if (!logOf) return;
    let current = true;
    api.logs(logOf, 40).then(
      (lines) => current && setLog(lines.map((l) => l.line)),
      (e: unknown) => onError(errorMessage(e)),
    );
    return () => {
      current = false;
    };
  }, [logOf, version, onError]);

  if (!team) return <section className="agents" data-testid="agents" aria-busy="true" />;
  const working = team.agents.filter((a) => a.state === "working" || a.state === "lease_running_out").length;
  return (
    <section className="agents" data-testid="agents">
      <p className="agents-summary" data-testid="agents-summary">
        {team.agents.length} agents · {working} working
        {team.agents.some((a) => a.state === "stale") &&
          ` · stale: ${team.agents.filter((a) => a.state === "stale").map((a) => a.name).join(", ")}`}
      </p>
      {team.agents.length === 0 ? (
        <p>No agent has claimed, logged or sent a heartbeat yet.</p>
      ) : (
        <div className="table-box">
        <table data-testid="agents-table">
          <caption className="visually-hidden">Agents of this project</caption>
          <thead>
            <tr>
              <th scope="col">Agent</th>
              <th scope="col">State</th>
              <th scope="col">Task</th>
              <th scope="col">Lease left</th>
              <th scope="col">Last heard</th>
              <th scope="col">Last did</th>
              <th scope="col">Done</th>
              <th scope="col">Failed</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {team.agents.map((agent) => (
              <Row
                key={agent.name}
                agent={agent}
                at={team.at}
                onLog={() => setLogOf(logOf === agent.name ? null : agent.name)}
                onShowTask={onShowTask}
                onReset={(id) =>
                  api.moveTask(id, "available").then(
                    () => {
                      onError(null);
                      onChanged();
                    },
                    (e: unknown) => onError(errorMessage(e)),
                  )
                }
              />
            ))}
          </tbody>
        </table>
        </div>
      )}
      {logOf && (
        <section className="agent-log" data-testid="agent-log" aria-label={`${logOf}'s log`}>
          <h3>{logOf}'s log</h3>
          <pre>{log.length > 0 ? log.join("\n") : "No log lines yet."}</pre>
        </section>
      )}
    </section>
  );
}

interface RowProps {
  agent: AgentRow;
  at: string;
  onLog: () => void;
  onShowTask: (id: string) => void;
  onReset: (id: string) => void;
}

function Row({ agent, at, onLog, onShowTask, onReset }: RowProps) {
  const task = agent.holds[0] ?? null;
  return (
    <tr data-testid={`agent-${agent.name}`} data-state={agent.state}>
      <th scope="row">{agent.name}</th>
      <td>
        <span data-testid="agent-state">
          <StateBadge agent={agent.state} />
        </span>
      </td>
      <td data-testid="agent-task">{task ? `${task.id}: ${task.description}` : "—"}</td>
      <td>{task ? leftText(task.lease_left_secs) : "—"}</td>
      <td>{lastHeard(agent.last_seen, at)}</td>
      <td className="last-line" title={agent.last_line ?? ""}>
        {agent.last_line ? withoutTime(agent.last_line) : "—"}
      </td>
      <td>{agent.done}</td>
      <td>{agent.failed}</td>
      <td>
        <div className="row-actions">
          <Button size="1" variant="soft" onClick={onLog} data-testid="agent-open-log">
            Log
          </Button>
          {task && (
            <Button size="1" variant="soft" onClick={() => onShowTask(task.id)} data-testid="agent-show-task">
              Show {task.id}
            </Button>
          )}
          {task && agent.state === "stale" && (
            <Button size="1" variant="soft" color="amber" onClick={() => onReset(task.id)} data-testid="agent-reset-task">
              Release {task.id} (lease expired)
            </Button>
          )}
        </div>
      </td>
    </tr>
  );
}
