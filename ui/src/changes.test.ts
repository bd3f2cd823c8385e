import { describe, expect, it } from "vitest";
import { serialReads } from "./changes";

/** A read that finishes when the test says so. */
function controlledRead() {
  const finishers: (() => void)[] = [];
  let started = 0;
  const read = () => {
    started += 1;
    return new Promise<void>((resolve) => finishers.push(resolve));
  };
  const finish = async () => {
    finishers.shift()?.();
    // Let the read's then/finally run.
    for (let i = 0; i < 5; i++) await Promise.resolve();
  };
  return { read, finish, started: () => started };
}

describe("reads on changes", () => {
  it("reads at once, never two at a time, and once more for the changes that came meanwhile", async () => {
    const r = controlledRead();
    const reads = serialReads(r.read);
    reads.start();
    expect(r.started()).toBe(1);
    reads.start();
    reads.start();
    reads.start();
    expect(r.started()).toBe(1);
    await r.finish();
    expect(r.started()).toBe(2);
    await r.finish();
    expect(r.started()).toBe(2);
    reads.start();
    expect(r.started()).toBe(3);
  });

  it("a failed read does not stop the next", async () => {
    let started = 0;
    const reads = serialReads(() => {
      started += 1;
      return Promise.reject(new Error("store gone"));
    });
    reads.start();
    reads.start();
    for (let i = 0; i < 10; i++) await Promise.resolve();
    expect(started).toBe(2);
  });
});
