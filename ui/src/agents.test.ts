import { describe, expect, it } from "vitest";
import { agentStateText, lastHeard, leftText, withoutTime } from "./agents";

describe("the Agents view's words", () => {
  it("says each state in words", () => {
    expect(agentStateText("lease_running_out")).toBe("Lease running out");
    expect(agentStateText("waiting_for_work")).toBe("Waiting for work");
    expect(agentStateText("stale")).toBe("Stale");
  });

  it("writes a lease's time left compactly", () => {
    expect(leftText(0)).toBe("expired");
    expect(leftText(12)).toBe("12s");
    expect(leftText(250)).toBe("4m 10s");
    expect(leftText(3900)).toBe("1h 05m");
  });

  it("says when an agent was last heard from, seen from the store's time", () => {
    const at = "2026-11-23T10:00:00Z";
    expect(lastHeard(null, at)).toBe("never");
    expect(lastHeard("2026-11-23T09:59:58Z", at)).toBe("just now");
    expect(lastHeard("2026-11-23T09:58:00Z", at)).toBe("2m 00s ago");
  });

  it("shows what an agent did last without the line's time", () => {
    expect(withoutTime("[2026-11-23T10:00:00Z] COMPLETE: task-1")).toBe("COMPLETE: task-1");
    expect(withoutTime("no time here")).toBe("no time here");
  });
});
