// Layout of the handoff graph (built by the backend, baton-agents' graph module) with dagre:
// left to right, so a chain reads like a sentence and a parallel run opens into a fork and
// closes in a join. Pure functions, so the layout is unit-tested without a window.

import dagre, { type EdgeLabel, type GraphLabel, type NodeLabel } from "@dagrejs/dagre";
import type { GraphEdge, GraphNode, HandoffGraph } from "./types";

export const NODE_WIDTH = 150;
export const NODE_HEIGHT = 46;
/** Forks and joins are small diamonds. */
export const JUNCTION_SIZE = 28;

export interface PlacedNode {
  node: GraphNode;
  /** Centre. */
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface PlacedEdge {
  edge: GraphEdge;
  /** An SVG path through dagre's points. */
  path: string;
  /** Where a label or a hit marker goes: the middle point. */
  mid: { x: number; y: number };
}

export interface Layout {
  nodes: PlacedNode[];
  edges: PlacedEdge[];
  width: number;
  height: number;
}

function size(node: GraphNode): { width: number; height: number } {
  return node.kind === "step"
    ? { width: NODE_WIDTH, height: NODE_HEIGHT }
    : { width: JUNCTION_SIZE, height: JUNCTION_SIZE };
}

/** Places every node and routes every edge. */
export function layoutGraph(graph: HandoffGraph): Layout {
  const g = new dagre.graphlib.Graph<GraphLabel, NodeLabel, EdgeLabel>({ multigraph: true });
  // Margins leave room for the labels under forks and joins, which are wider than the diamonds.
  g.setGraph({ rankdir: "LR", nodesep: 28, ranksep: 56, marginx: 48, marginy: 16 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const node of graph.nodes) g.setNode(node.id, size(node));
  for (const edge of graph.edges) g.setEdge(edge.source, edge.target, {}, edge.id);
  dagre.layout(g);

  const nodes = graph.nodes.map((node) => {
    const placed = g.node(node.id);
    return { node, x: placed.x ?? 0, y: placed.y ?? 0, ...size(node) };
  });
  const edges = graph.edges.map((edge) => {
    const points = g.edge({ v: edge.source, w: edge.target, name: edge.id }).points ?? [];
    const path = points.map((p, i) => `${i === 0 ? "M" : "L"}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(" ");
    const mid = points[Math.floor(points.length / 2)] ?? { x: 0, y: 0 };
    return { edge, path, mid };
  });
  const label = g.graph();
  return { nodes, edges, width: label.width ?? 0, height: label.height ?? 0 };
}

/** A node's second line: the invocation's model and status, or the run's state. */
export function nodeDetail(node: GraphNode): string {
  if (node.invocation) {
    const model = node.invocation.model ? `${node.invocation.model} · ` : "";
    return `${model}${node.invocation.status}`;
  }
  if (node.kind === "step") return "no invocation";
  return node.label;
}

/** What an edge is, in words, for its details panel. */
export function edgeTitle(edge: GraphEdge, nodes: GraphNode[]): string {
  const label = (id: string) => nodes.find((n) => n.id === id)?.label ?? id;
  const arrow = `${label(edge.source)} → ${label(edge.target)}`;
  switch (edge.kind) {
    case "handoff":
      return `Handoff ${arrow}`;
    case "fork":
      return `Parallel run starts: ${arrow}`;
    case "join":
      return `Result joins: ${arrow}`;
    case "escalation":
      return `Conflict escalated: ${arrow}`;
  }
}
