import { useEffect, useMemo, useState, type KeyboardEvent } from "react";
import { api, errorMessage } from "./api";
import { useChangeCount } from "./changes";
import { edgeTitle, layoutGraph, nodeDetail, type PlacedNode } from "./graph";
import type { GraphEdge, GraphNode, HandoffGraph } from "./types";

type Selection = { edge: string } | { node: string } | null;

/** Enter or Space on a focused node or edge selects it, as a click does. */
function activate(event: KeyboardEvent, select: () => void) {
  if (event.key === "Enter" || event.key === " ") {
    event.preventDefault();
    select();
  }
}

/** Agents, invocations and handoffs as a left-to-right graph; re-read whenever the
 *  orchestration state changes, so new handoffs appear as agents record them. Selecting an
 *  edge shows what was handed on. */
export function HandoffGraphView({ onError }: { onError: (m: string) => void }) {
  const [graph, setGraph] = useState<HandoffGraph | null>(null);
  const [selection, setSelection] = useState<Selection>(null);
  // Invocations, handoffs and runs live in orchestration/state.json.
  const changed = useChangeCount("orchestration_changed");

  useEffect(() => {
    api.handoffGraph().then(setGraph, (e: unknown) => onError(errorMessage(e)));
  }, [changed, onError]);

  const layout = useMemo(() => (graph ? layoutGraph(graph) : null), [graph]);
  if (!graph || !layout) return <section className="graph" data-testid="handoff-graph" />;
  if (graph.nodes.length === 0) {
    return (
      <section className="graph" data-testid="handoff-graph">
        <p className="empty">No invocations or handoffs yet. Agents record them with `baton invoke`, `baton handoff track` or the MCP tools.</p>
      </section>
    );
  }
  const edge = selection && "edge" in selection ? graph.edges.find((e) => e.id === selection.edge) : undefined;
  const node = selection && "node" in selection ? graph.nodes.find((n) => n.id === selection.node) : undefined;

  return (
    <section className="graph" data-testid="handoff-graph">
      <div className="graph-canvas">
        <svg width={layout.width} height={layout.height} role="group" aria-label="Handoff graph">
          <defs>
            {[
              ["arrow", "#7a8699"],
              ["arrow-conflict", "#c62828"],
            ].map(([id, colour]) => (
              <marker key={id} id={id} viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="9" markerHeight="9" orient="auto">
                <path d="M0,0 L10,5 L0,10 z" fill={colour} />
              </marker>
            ))}
          </defs>
          {layout.edges.map(({ edge: e, path }) => (
            <g
              key={e.id}
              className={`edge ${e.kind}${e.conflict ? " conflict" : ""}${edge?.id === e.id ? " selected" : ""}`}
              data-testid={`edge-${e.id}`}
              role="button"
              tabIndex={0}
              aria-label={edgeTitle(e, graph.nodes)}
              onClick={() => setSelection({ edge: e.id })}
              onKeyDown={(key) => activate(key, () => setSelection({ edge: e.id }))}
            >
              <path className="hit" d={path} />
              <path className="line" d={path} markerEnd={e.conflict ? "url(#arrow-conflict)" : "url(#arrow)"} />
            </g>
          ))}
          {layout.nodes.map((placed) => (
            <NodeShape
              key={placed.node.id}
              placed={placed}
              selected={node?.id === placed.node.id}
              onSelect={() => setSelection({ node: placed.node.id })}
            />
          ))}
        </svg>
      </div>
      <aside className="graph-details" data-testid="graph-details">
        {edge ? (
          <EdgeDetails edge={edge} nodes={graph.nodes} />
        ) : node ? (
          <NodeDetails node={node} />
        ) : (
          <p className="hint">Select an arrow to see what was handed on, or a box for its invocation.</p>
        )}
      </aside>
    </section>
  );
}

function NodeShape({ placed, selected, onSelect }: { placed: PlacedNode; selected: boolean; onSelect: () => void }) {
  const { node, x, y, width, height } = placed;
  const classes = `node ${node.kind}${node.conflict ? " conflict" : ""}${selected ? " selected" : ""} ${node.invocation?.status ?? ""}`;
  if (node.kind !== "step") {
    const r = width / 2;
    return (
      <g className={classes} data-testid={`node-${node.id}`} role="button" tabIndex={0} aria-label={node.label} onClick={onSelect} onKeyDown={(key) => activate(key, onSelect)}>
        <title>{node.label}</title>
        <path d={`M${x},${y - r} L${x + r},${y} L${x},${y + r} L${x - r},${y} z`} />
        <text x={x} y={y + r + 12} textAnchor="middle" className="junction-label">
          {node.label}
        </text>
      </g>
    );
  }
  return (
    <g
      className={classes}
      data-testid={`node-${node.id}`}
      role="button"
      tabIndex={0}
      aria-label={`${node.label}: ${nodeDetail(node)}`}
      onClick={onSelect}
      onKeyDown={(key) => activate(key, onSelect)}
    >
      <rect x={x - width / 2} y={y - height / 2} width={width} height={height} rx={6} />
      <text x={x} y={y - 4} textAnchor="middle" className="agent">
        {node.label}
      </text>
      <text x={x} y={y + 13} textAnchor="middle" className="detail">
        {nodeDetail(node)}
      </text>
    </g>
  );
}

function EdgeDetails({ edge, nodes }: { edge: GraphEdge; nodes: GraphNode[] }) {
  const h = edge.handoff;
  return (
    <div data-testid="edge-details">
      <h3>{edgeTitle(edge, nodes)}</h3>
      {edge.conflict && <p className="conflict-note">The agents in this parallel run disagreed.</p>}
      {!h && <p className="hint">No handoff was recorded on this edge.</p>}
      {h && (
        <>
          <p className="when">{new Date(h.at).toLocaleString()}</p>
          <h4>Summary</h4>
          <pre className="summary">{h.summary}</pre>
          <List title="Decisions" items={h.decisions.map((d) => `${d.decision} — ${d.rationale}`)} />
          <List title="Open questions" items={h.open_questions} />
          <List title="Artifacts" items={h.artifacts} />
        </>
      )}
    </div>
  );
}

function NodeDetails({ node }: { node: GraphNode }) {
  const inv = node.invocation;
  return (
    <div data-testid="node-details">
      <h3>{node.kind === "step" ? node.label : `${node.label} (${node.kind})`}</h3>
      {node.parallel_id && <p>Parallel run {node.parallel_id}</p>}
      {inv ? (
        <>
          <p>
            Invocation {inv.id}: {inv.status}
            {inv.model && `, model ${inv.model}`}
          </p>
          {inv.task && <pre className="summary">{inv.task}</pre>}
        </>
      ) : (
        node.kind === "step" && <p className="hint">Reached by a handoff; no invocation recorded.</p>
      )}
    </div>
  );
}

function List({ title, items }: { title: string; items: string[] }) {
  if (items.length === 0) return null;
  return (
    <>
      <h4>{title}</h4>
      <ul>
        {items.map((item, i) => (
          <li key={i}>{item}</li>
        ))}
      </ul>
    </>
  );
}
