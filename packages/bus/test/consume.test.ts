import { type ExecutionRequested, WORK_SUBJECTS } from "@tarsy/contracts";
import { describe, expect, it } from "vitest";
import type { ConsumeContext } from "../src/index.ts";
import { deliveryState, FAST, useConsumeRig } from "./consume-support.ts";
import { captureLogger, eventually, executionRequested, sleep, workLeft } from "./support.ts";

const { fresh, workers } = useConsumeRig();

describe("consume", () => {
  it("hands each message to the handler of its kind and removes it from the queue", async () => {
    const h = await fresh();
    const seen: { payload: ExecutionRequested; ctx: ConsumeContext }[] = [];
    const worker = await h.bus.consume(
      "runner",
      { executionRequested: async (payload, ctx) => void seen.push({ payload, ctx }) },
      FAST,
    );
    workers.push(worker);
    const payload = executionRequested({ kind: "chat" });
    await h.bus.publish("executionRequested", payload);

    await eventually(() => seen[0], 5_000, "delivery");
    expect(seen[0]?.payload).toEqual(payload);
    expect(seen[0]?.ctx).toMatchObject({
      deliveryCount: 1,
      streamSeq: 1,
      subject: WORK_SUBJECTS.executionRequested,
    });
    expect(await eventually(async () => ((await workLeft(h)) === 0 ? 0 : undefined))).toBe(0);
  });

  it("runs at most `concurrency` handlers at once", async () => {
    const h = await fresh();
    let running = 0;
    let peak = 0;
    let finished = 0;
    const worker = await h.bus.consume(
      "runner",
      {
        executionRequested: async () => {
          running++;
          peak = Math.max(peak, running);
          await sleep(150);
          running--;
          finished++;
        },
      },
      { ...FAST, concurrency: 2 },
    );
    workers.push(worker);
    await Promise.all(
      Array.from({ length: 6 }, () => h.bus.publish("executionRequested", executionRequested())),
    );
    await eventually(() => (finished === 6 ? true : undefined), 10_000, "six handled");
    expect(peak).toBe(2);
  });

  it("keeps a handler that outlives ack_wait from being redelivered (in-progress acks)", async () => {
    const h = await fresh({ consumers: { runner: { ackWaitMs: 600 } } });
    const deliveries: number[] = [];
    let finished = false;
    const first = await h.bus.consume(
      "runner",
      {
        executionRequested: async (_p, ctx) => {
          deliveries.push(ctx.deliveryCount);
          await sleep(2_000);
          finished = true;
        },
      },
      FAST,
    );
    const second = await (await h.another()).consume(
      "runner",
      { executionRequested: async (_p, ctx) => void deliveries.push(ctx.deliveryCount) },
      FAST,
    );
    workers.push(first, second);
    await h.bus.publish("executionRequested", executionRequested());
    await eventually(() => (finished ? true : undefined), 5_000, "long handler");
    // Acked (gone from the work queue), and the server delivered it exactly once in all.
    await eventually(async () => ((await workLeft(h)) === 0 ? true : undefined), 5_000, "the ack");
    expect(await deliveryState(h, "runner")).toEqual({ deliveries: 1, pending: 0, unacked: 0 });
    expect(deliveries).toEqual([1]);
  });

  it("stop() waits for running handlers, then hands unfinished work back for another consumer", async () => {
    const h = await fresh();
    const other = await h.another();
    let started = 0;
    let aborted = 0;
    const first = await h.bus.consume(
      "runner",
      {
        executionRequested: async (_p, ctx) => {
          started++;
          // ignores ctx.signal on purpose: a handler stuck in a slow call
          await new Promise<void>((resolve) => setTimeout(resolve, 10_000).unref());
          if (ctx.signal.aborted) aborted++;
        },
      },
      { fetchExpiresMs: 1_000, stopTimeoutMs: 300 },
    );
    const payload = executionRequested();
    await h.bus.publish("executionRequested", payload);
    await eventually(() => (started === 1 ? true : undefined), 5_000, "first delivery");

    const startedAt = Date.now();
    const report = await first.stop();
    expect(Date.now() - startedAt).toBeLessThan(2_500);
    expect(report).toEqual({ handedBack: 1, timedOut: true });

    const taken: { id: string; delivery: number }[] = [];
    const second = await other.consume(
      "runner",
      {
        executionRequested: async (p, ctx) =>
          void taken.push({ id: p.execution_id, delivery: ctx.deliveryCount }),
      },
      FAST,
    );
    workers.push(second);
    // handed back with a nak: redelivered at once, long before ack_wait (30 s)
    await eventually(() => taken[0], 3_000, "handed-back work");
    expect(taken).toEqual([{ id: payload.execution_id, delivery: 2 }]);
    expect(aborted).toBe(0);
  });

  it("stop() lets a handler that watches the signal finish, and hands the work back", async () => {
    const h = await fresh();
    let started = false;
    const worker = await h.bus.consume(
      "runner",
      {
        executionRequested: async (_p, ctx) => {
          started = true;
          await new Promise<void>((_, reject) => {
            ctx.signal.addEventListener("abort", () => reject(new Error("shutting down")));
          });
        },
      },
      FAST,
    );
    await h.bus.publish("executionRequested", executionRequested());
    await eventually(() => (started ? true : undefined));
    expect(await worker.stop()).toEqual({ handedBack: 1, timedOut: false });
    expect(await h.admin.listDeadLetters()).toEqual({ items: [], more: false });
    expect(await workLeft(h)).toBe(1);
  });

  it("redelivers a message the handler deferred, after the delay, without counting it as a failure", async () => {
    const h = await fresh({ consumers: { orchestrator: { maxDeliver: 2 } } });
    const deliveries: { at: number; count: number }[] = [];
    const noop = async () => {};
    const worker = await h.bus.consume(
      "orchestrator",
      {
        sessionSubmitted: noop,
        chatSubmitted: noop,
        cancelRequested: noop,
        executionFinished: noop,
        scoreRequested: noop,
        feedbackSubmitted: noop,
        deadline: async (p, ctx) => {
          deliveries.push({ at: Date.now(), count: ctx.deliveryCount });
          const due = Date.parse(p.deadline_at) - Date.now();
          if (due > 0) ctx.retryLater(due);
        },
      },
      FAST,
    );
    workers.push(worker);
    const deadlineAt = new Date(Date.now() + 700).toISOString();
    await h.bus.publish("deadline", {
      v: 1,
      session_id: "s",
      scope: "session",
      deadline_at: deadlineAt,
    });
    await eventually(() => (deliveries.length === 2 ? true : undefined), 5_000, "deadline due");
    expect(deliveries[1]!.at).toBeGreaterThanOrEqual(Date.parse(deadlineAt) - 20);
    expect(deliveries.map((d) => d.count)).toEqual([1, 2]);
    await eventually(async () => ((await workLeft(h)) === 0 ? true : undefined));
    expect((await h.admin.listDeadLetters()).items).toEqual([]);
  });

  it("refuses to consume before provisioning, and a handler map must cover every kind", async () => {
    const h = await fresh({}, false);
    await expect(
      h.bus.consume("runner", { executionRequested: async () => {} }),
    ).rejects.toMatchObject({ code: "bus_not_found" });
    // Compile-time: leaving out a message kind of the consumer is a type error.
    const incomplete = () =>
      // @ts-expect-error executionFinished (and others) have no handler
      h.bus.consume("orchestrator", { sessionSubmitted: async () => {} });
    expect(typeof incomplete).toBe("function");
  });

  it("close() with a running consumer stops it quietly; the work is redelivered elsewhere", async () => {
    const h = await fresh({ consumers: { runner: { ackWaitMs: 1_000 } } });
    const { logger, lines } = captureLogger();
    const doomed = await h.another({ logger });
    let started = false;
    await doomed.consume(
      "runner",
      {
        executionRequested: async () => {
          started = true;
          await sleep(1_500);
        },
      },
      { ...FAST, stopTimeoutMs: 500 },
    );
    const payload = executionRequested();
    await h.bus.publish("executionRequested", payload);
    await eventually(() => (started ? true : undefined));
    await doomed.close();
    // The pull loop has seen the closed connection and ended: any failure it logs is logged by now.
    await eventually(() => lines().find((l) => l.msg === "pull loop ended"), 5_000, "loop end");
    expect(lines().filter((l) => l.msg === "pull failed; retrying")).toEqual([]);

    const taken: number[] = [];
    workers.push(
      await h.bus.consume(
        "runner",
        { executionRequested: async (_p, ctx) => void taken.push(ctx.deliveryCount) },
        FAST,
      ),
    );
    await eventually(() => taken[0], 5_000, "redelivery");
    expect(taken).toEqual([2]);
  });
});
