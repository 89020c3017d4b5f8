import { describe, expect, it } from "vitest";
import { ControlAdmission } from "./admission.ts";
import { TokenBucket } from "./token-bucket.ts";

describe("TokenBucket", () => {
  it("allows the burst at once, then the rate", () => {
    let now = 0;
    const bucket = new TokenBucket(10, 5, () => now);
    const first = Array.from({ length: 8 }, () => bucket.take());
    expect(first).toEqual([true, true, true, true, true, false, false, false]);
    now += 250; // 2.5 tokens
    expect([bucket.take(), bucket.take(), bucket.take()]).toEqual([true, true, false]);
    now += 60_000; // refills to the burst, not beyond
    expect(Array.from({ length: 6 }, () => bucket.take()).filter(Boolean)).toHaveLength(5);
  });
});

describe("ControlAdmission", () => {
  const limits = {
    controlRatePerSec: 10,
    controlBurst: 4,
    controlViolationsBeforeClose: 3,
    maxPendingCatchups: 2,
  };

  it("warns once, drops, then closes on sustained abuse", () => {
    const admission = new ControlAdmission(limits, () => 0);
    const decisions = Array.from({ length: 9 }, () => admission.admit(0));
    expect(decisions).toEqual([
      "admit",
      "admit",
      "admit",
      "admit",
      "warn",
      "drop",
      "drop",
      "close",
      "close",
    ]);
  });

  it("sustained abuse at twice the rate is closed: a refilled token does not forgive it", () => {
    let now = 0;
    const admission = new ControlAdmission(limits, () => now);
    const decisions: string[] = [];
    for (let i = 0; i < 40; i++) {
      decisions.push(admission.admit(0));
      now += 50; // 20 messages/s against a rate of 10/s
    }
    expect(decisions.filter((d) => d === "warn")).toHaveLength(1);
    expect(decisions).toContain("close");
  });

  it("a client quiet for a second after going over starts a new episode", () => {
    let now = 0;
    const admission = new ControlAdmission(limits, () => now);
    for (let i = 0; i < 4; i++) admission.admit(0);
    expect(admission.admit(0)).toBe("warn");
    expect(admission.admit(0)).toBe("drop");
    now += 1_000;
    expect(admission.admit(0)).toBe("admit");
    for (let i = 0; i < 3; i++) admission.admit(0);
    expect(admission.admit(0)).toBe("warn");
  });

  it("refuses a message while the queue of actions is full, even with tokens", () => {
    const admission = new ControlAdmission(limits, () => 0);
    expect(admission.admit(limits.controlBurst)).toBe("warn");
    expect(admission.admit(limits.controlBurst - 1)).toBe("admit");
  });
});
