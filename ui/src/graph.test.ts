import { describe, expect, it } from "vitest";
import { edgeTitle, layoutGraph, nodeDetail } from "./graph";
import type { GraphEdge, GraphNode, HandoffGraph } from "./types";

/** The value, or a failed test. */
function must<T>(value: T | undefined): T {
  if (value === undefined) throw new Error("missing");
  return value;
}

function step(id: string, agent: string): GraphNode {
  return { id, kind: "step", agent, label: agent, invocation: null, parallel_id: null, parallel_status: null, conflict: false };
}

function junction(id: string, kind: "fork" | "join", conflict = false): GraphNode {
  return { id, kind, agent: null, label: kind, invocation: null, parallel_id: "par-1", parallel_status: null, conflict };
}

function edge(id: string, source: string, target: string, kind: GraphEdge["kind"] = "handoff"): GraphEdge {
  return { id, source, target, kind, handoff: null, conflict: false };
}

// analyst → planner → fork → (architect | security) → join → implementer
const graph: HandoffGraph = {
  nodes: [
    step("n1", "analyst"),
    step("n2", "planner"),
    junction("n3", "fork"),
    junction("n4", "join", true),
    step("n5", "architect"),
    step("n6", "security"),
    step("n7", "implementer"),
  ],
  edges: [
    edge("e1", "n1", "n2"),
    edge("e2", "n2", "n3", "fork"),
    edge("e3", "n3", "n5", "fork"),
    edge("e4", "n5", "n4", "join"),
    edge("e5", "n3", "n6", "fork"),
    edge("e6", "n6", "n4", "join"),
    edge("e7", "n4", "n7"),
  ],
};

describe("handoff graph layout", () => {
  const layout = layoutGraph(graph);
  const at = (id: string) => must(layout.nodes.find((n) => n.node.id === id));

  it("reads a chain left to right", () => {
    const xs = ["n1", "n2", "n3", "n5", "n4", "n7"].map((id) => at(id).x);
    expect([...xs].sort((a, b) => a - b)).toEqual(xs);
    expect(new Set(xs).size).toBe(xs.length);
  });

  it("lays a parallel run out as a fork into members side by side and a join", () => {
    expect(at("n5").x).toBe(at("n6").x);
    expect(at("n5").y).not.toBe(at("n6").y);
    expect(at("n3").x).toBeLessThan(at("n5").x);
    expect(at("n4").x).toBeGreaterThan(at("n5").x);
  });

  it("routes every edge from its source to its target and fits the canvas", () => {
    expect(layout.edges).toHaveLength(7);
    for (const placed of layout.edges) {
      expect(placed.path).toMatch(/^M[\d.]+,[\d.]+( L[\d.]+,[\d.]+)+$/);
      const source = at(placed.edge.source);
      const start = must(placed.path.slice(1).split(" ")[0]).split(",").map(Number);
      expect(Math.abs(must(start[0]) - source.x)).toBeLessThanOrEqual(source.width / 2 + 1);
    }
    for (const n of layout.nodes) {
      expect(n.x + n.width / 2).toBeLessThanOrEqual(layout.width);
      expect(n.y + n.height / 2).toBeLessThanOrEqual(layout.height);
    }
  });

  it("lays out an empty graph as an empty canvas", () => {
    const empty = layoutGraph({ nodes: [], edges: [] });
    expect(empty.nodes).toEqual([]);
    expect(empty.edges).toEqual([]);
  });

  it("describes nodes and edges in words", () => {
    const invoked: GraphNode = { ...step("n9", "qa"), invocation: { id: "inv-1", status: "completed", model: "sonnet", task: "Test" } };
    expect(nodeDetail(invoked)).toBe("sonnet · completed");
    expect(nodeDetail(step("n1", "analyst"))).toBe("no invocation");
    expect(edgeTitle(must(graph.edges[0]), graph.nodes)).toBe("Handoff analyst → planner");
    expect(edgeTitle(must(graph.edges[3]), graph.nodes)).toBe("Result joins: architect → join");
  });
});
