import { describe, expect, it } from "vitest";
import { coalesced } from "./coalesce";

/** A read that ends when the test says. */
function gated() {
  const ends: (() => void)[] = [];
  let started = 0;
  const read = () =>
    new Promise<void>((resolve) => {
      started += 1;
      ends.push(resolve);
    });
  return { read, ends, started: () => started };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("coalesced reads", () => {
  it("reads at once, and once more after a burst that came while reading", async () => {
    const { read, ends, started } = gated();
    const refresh = coalesced(read);
    refresh();
    expect(started()).toBe(1);
    refresh();
    refresh();
    refresh();
    expect(started()).toBe(1);
    ends.shift()?.();
    await settle();
    expect(started()).toBe(2);
    ends.shift()?.();
    await settle();
    expect(started()).toBe(2);
    refresh();
    expect(started()).toBe(3);
  });

  it("goes on after a read that fails", async () => {
    let calls = 0;
    const refresh = coalesced(() => {
      calls += 1;
      return Promise.reject(new Error("the server went away"));
    });
    refresh();
    await settle();
    refresh();
    expect(calls).toBe(2);
  });
});
