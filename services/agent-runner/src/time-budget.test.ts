import { describe, expect, test } from "vitest";
import { TimeBudget } from "./time-budget.ts";

describe("TimeBudget", () => {
  const at = (now: number) => () => now;

  const limits = { wrapUpReserveMs: 180_000, iterationTimeoutMs: 300_000 };

  test("without a deadline nothing is clamped and the agent never wraps up for time", () => {
    const budget = TimeBudget.of(undefined, new Date(), limits);
    expect(budget.deadlineAt).toBeNull();
    expect(budget.mustWrapUp()).toBe(false);
    expect(budget.wrapUpAt()).toBeNull();
    expect(budget.clampMs(120_000)).toBe(120_000);
  });

  test("the reserve is the configured one, or the iteration timeout, or half the execution's whole budget, whichever is shortest", () => {
    const deadline = "2026-11-27T12:00:00.000Z";
    const created = (minutesBefore: number) =>
      new Date(Date.parse(deadline) - minutesBefore * 60_000);
    expect(TimeBudget.of(deadline, created(40), limits).reserveMs).toBe(180_000);
    expect(
      TimeBudget.of(deadline, created(40), { ...limits, iterationTimeoutMs: 120_000 }).reserveMs,
    ).toBe(120_000);
    // A two-minute chat turn keeps a minute to investigate.
    expect(TimeBudget.of(deadline, created(2), limits).reserveMs).toBe(60_000);
    // Created after its deadline: no reserve (the runner stops it at once anyway).
    expect(TimeBudget.of(deadline, created(-1), limits).reserveMs).toBe(0);
  });

  test("steps end where the wrap-up begins; inside the reserve the agent must conclude", () => {
    const deadline = 1_000_000;
    const early = new TimeBudget(deadline, 180_000, at(deadline - 600_000));
    expect(early.mustWrapUp()).toBe(false);
    expect(early.wrapUpAt()).toBe(deadline - 180_000);
    // 420 s until the wrap-up: a 120 s step keeps its limit, a longer one is cut to 420 s.
    expect(early.clampMs(120_000)).toBe(120_000);
    expect(early.clampMs(1_000_000)).toBe(420_000);

    const late = new TimeBudget(deadline, 180_000, at(deadline - 180_000));
    expect(late.mustWrapUp()).toBe(true);
    // Past the wrap-up a step gets the least a timer can wait, never a negative delay.
    expect(late.clampMs(120_000)).toBe(1);
    expect(new TimeBudget(deadline, 180_000, at(deadline + 5_000)).mustWrapUp()).toBe(true);
  });

  test("a step is never longer than a Node.js timer can wait", () => {
    const far = new TimeBudget(Date.now() + 90 * 86_400_000, 180_000);
    expect(far.clampMs(Number.MAX_SAFE_INTEGER)).toBe(2_147_483_647);
  });
});
