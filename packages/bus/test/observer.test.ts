import type { ConsumerKey } from "@tarsy/contracts";
import { afterEach, describe, expect, it } from "vitest";
import type { PublishedMessage, WorkConsumer } from "../src/index.ts";
import {
  eventually,
  executionRequested,
  type Harness,
  harness,
  sessionStatus,
  workLeft,
} from "./support.ts";

const open: Harness[] = [];
const workers: WorkConsumer[] = [];
afterEach(async () => {
  for (const w of workers.splice(0)) await w.stop();
  for (const h of open.splice(0)) await h.cleanup();
});

const FAST = { fetchExpiresMs: 1_000, stopTimeoutMs: 2_000, backoff: { initialMs: 50 } };

/** A bus whose observer records every hook call. */
async function observed(overrides: Parameters<typeof harness>[0] = {}) {
  const published: PublishedMessage[] = [];
  const redelivered: [ConsumerKey, number][] = [];
  const deadLettered: ConsumerKey[] = [];
  const h = await harness({
    ...overrides,
    observer: {
      published: (m) => void published.push(m),
      redelivered: (c, n) => void redelivered.push([c, n]),
      deadLettered: (c) => void deadLettered.push(c),
    },
  });
  open.push(h);
  return { h, published, redelivered, deadLettered };
}

describe("bus observer", () => {
  it("reports stored and transient publishes, but not a publish the stream dropped as a duplicate", async () => {
    const { h, published } = await observed();
    const event = sessionStatus("s-obs", "in_progress");
    await h.bus.publish("sessionStatus", event);
    await h.bus.publish("sessionStatus", event); // same Nats-Msg-Id: a duplicate
    h.bus.publishTransient("cancelControl", {
      v: 1,
      session_id: "s-obs",
      scope: "session",
      reason: "cancelled",
      timestamp: new Date().toISOString(),
    });
    expect(published.map((m) => m.key)).toEqual(["sessionStatus", "cancelControl"]);
    expect(published[0]?.payload).toEqual(event);
  });

  it("reports redeliveries after a failure and the dead letter at the end, not a retryLater", async () => {
    const { h, redelivered, deadLettered } = await observed({
      consumers: { runner: { maxDeliver: 3 }, orchestrator: { maxDeliver: 5 } },
    });
    workers.push(
      await h.bus.consume(
        "runner",
        {
          executionRequested: async () => {
            throw new Error("always fails");
          },
        },
        FAST,
      ),
    );
    let deadlineDeliveries = 0;
    workers.push(
      await h.bus.consume(
        "orchestrator",
        {
          sessionSubmitted: async () => {},
          chatSubmitted: async () => {},
          cancelRequested: async () => {},
          executionFinished: async () => {},
          scoreRequested: async () => {},
          feedbackSubmitted: async () => {},
          deadline: async (_p, ctx) => {
            deadlineDeliveries = ctx.deliveryCount;
            if (ctx.deliveryCount === 1) ctx.retryLater(50);
          },
        },
        FAST,
      ),
    );
    await h.bus.publish("executionRequested", executionRequested());
    await h.bus.publish("deadline", {
      v: 1,
      session_id: "s-obs",
      scope: "session",
      deadline_at: new Date().toISOString(),
    });
    await eventually(() => (deadLettered.length > 0 ? true : undefined), 10_000, "dead letter");
    await eventually(() => (deadlineDeliveries === 2 ? true : undefined), 5_000, "retryLater");
    // Both messages are settled for good (the work queue is empty): no delivery can follow.
    await eventually(async () => ((await workLeft(h)) === 0 ? true : undefined), 5_000, "acks");
    expect(redelivered).toEqual([
      ["runner", 2],
      ["runner", 3],
    ]);
    expect(deadLettered).toEqual(["runner"]);
  });

  it("never lets a throwing observer fail a publish", async () => {
    const h = await harness({
      observer: {
        published: () => {
          throw new Error("observer bug");
        },
      },
    });
    open.push(h);
    const results = await h.bus.publish("sessionStatus", sessionStatus("s-throw", "completed"));
    expect(results).toHaveLength(2);
  });

  it("counts a work consumer's backlog: waiting plus unacknowledged messages", async () => {
    const { h } = await observed();
    expect(await h.admin.workBacklog("runner")).toBe(0);
    await h.bus.publish("executionRequested", executionRequested());
    await h.bus.publish("executionRequested", executionRequested());
    await h.bus.publish("executionRequested", executionRequested());
    expect(await h.admin.workBacklog("runner")).toBe(3);
    expect(await h.admin.workBacklog("orchestrator")).toBe(0);
  });
});
