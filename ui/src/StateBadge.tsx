import {
  Activity,
  AlertTriangle,
  CircleOff,
  CircleStop,
  Clock,
  Hourglass,
  Moon,
  RotateCcw,
  Square,
  type LucideIcon,
} from "lucide-react";
import { agentStateText } from "./agents";
import type { AgentState } from "./bindings/AgentState";
import type { WorkerState } from "./bindings/WorkerState";

const AGENT_ICONS: Record<AgentState, LucideIcon> = {
  working: Activity,
  lease_running_out: Hourglass,
  stale: AlertTriangle,
  waiting_for_work: Clock,
  idle: Moon,
  gone: CircleOff,
};

const WORKER_ICONS: Record<WorkerState, LucideIcon> = {
  waiting: Clock,
  working: Activity,
  backing_off: RotateCcw,
  stopping: Square,
  stopped: CircleStop,
};

/** An agent's or a worker's state: its word, an icon and a colour, so that no state is told
 *  by colour alone. */
export function StateBadge(props: { agent: AgentState } | { worker: WorkerState }) {
  const [state, Icon, text] =
    "agent" in props
      ? [props.agent, AGENT_ICONS[props.agent], agentStateText(props.agent)]
      : [props.worker, WORKER_ICONS[props.worker], props.worker.replace("_", " ")];
  return (
    <span className={`state state-${state}`}>
      <Icon aria-hidden="true" size={12} strokeWidth={2.5} />
      {text}
    </span>
  );
}
