import {
  Activity,
  AlertTriangle,
  CircleOff,
  CircleStop,
  Clock,
  Hourglass,
  Moon,
  Pause,
  RotateCcw,
  Square,
  type LucideIcon,
} from "lucide-react";
import { Badge } from "@radix-ui/themes";
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

/** The theme's colour of each state: green at work, amber running late, red stale, indigo
 *  waiting, gray at rest. */
type Colour = "green" | "amber" | "red" | "indigo" | "gray";
const AGENT_COLOURS: Record<AgentState, Colour> = {
  working: "green",
  lease_running_out: "amber",
  stale: "red",
  waiting_for_work: "indigo",
  idle: "gray",
  gone: "gray",
};
const WORKER_COLOURS: Record<WorkerState, Colour> = {
  waiting: "indigo",
  working: "green",
  backing_off: "amber",
  stopping: "gray",
  paused: "amber",
  stopped: "gray",
};

const WORKER_ICONS: Record<WorkerState, LucideIcon> = {
  waiting: Clock,
  working: Activity,
  backing_off: RotateCcw,
  stopping: Square,
  paused: Pause,
  stopped: CircleStop,
};

/** An agent's or a worker's state: its word, an icon and a colour, so that no state is told
 *  by colour alone. */
export function StateBadge(props: { agent: AgentState } | { worker: WorkerState }) {
  const [state, Icon, text, colour] =
    "agent" in props
      ? [props.agent, AGENT_ICONS[props.agent], agentStateText(props.agent), AGENT_COLOURS[props.agent]]
      : [props.worker, WORKER_ICONS[props.worker], props.worker.replace("_", " "), WORKER_COLOURS[props.worker]];
  return (
    <Badge color={colour} variant="soft" highContrast radius="full" className={`state state-${state}`}>
      <Icon aria-hidden="true" size={12} strokeWidth={2.5} />
      {text}
    </Badge>
  );
}
