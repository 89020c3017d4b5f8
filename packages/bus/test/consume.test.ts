import { jetstreamManager } from "@nats-io/jetstream";
import {
  CONSUMERS,
  type ConsumerKey,
  type ExecutionRequested,
  WORK_SUBJECTS,
} from "@tarsy/contracts";
import { afterEach, describe, expect, it } from "vitest";
import type { ConsumeContext, WorkConsumer } from "../src/index.ts";
import {
  captureLogger,
  eventually,
  executionRequested,
  type Harness,
  harness,
  now,
  sleep,
  workLeft,
} from "./support.ts";

const open: Harness[] = [];
const workers: WorkConsumer[] = [];
async function fresh(overrides: Parameters<typeof harness>[0] = {}): Promise<Harness> {
  const h = await harness(overrides);
  open.push(h);
  return h;
}
afterEach(async () => {
  for (const w of workers.splice(0)) await w.stop();
  for (const h of open.splice(0)) await h.cleanup();
});

const FAST = { fetchExpiresMs: 1_000, stopTimeoutMs: 2_000 };

/** The dead letters, once there are any. */
function deadLetters(h: Harness, what = "a dead letter") {
  return eventually(
    async () => {
      const p = await h.admin.listDeadLetters();
      return p.items.length > 0 ? p.items : undefined;
    },
    10_000,
    what,
  );
}

/**
 * The server's own count of what a durable consumer handed out: every delivery, redeliveries
 * included, takes a consumer sequence; `pending` is what is stored and not yet delivered,
 * `unacked` what is delivered and waiting for an ack (and so could be redelivered).
 */
async function deliveryState(h: Harness, key: ConsumerKey) {
  const jsm = await jetstreamManager(h.raw);
  const info = await jsm.consumers.info(`TARSY_WORK${h.streamSuffix}`, CONSUMERS[key].durable);
  return {
    deliveries: info.delivered.consumer_seq,
    pending: info.num_pending,
    unacked: info.num_ack_pending,
  };
}

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

  it("drops a message whose handler error the drop option names: acked, never retried nor dead-lettered", async () => {
    class GoneError extends Error {}
    const h = await fresh({ consumers: { runner: { maxDeliver: 2 } } });
    const gone = executionRequested();
    const flaky = executionRequested();
    const attempts: string[] = [];
    const dropped: { err: unknown; key: string; id: string; delivery: number }[] = [];
    const worker = await h.bus.consume(
      "runner",
      {
        executionRequested: async (p) => {
          attempts.push(p.execution_id);
          if (p.execution_id === gone.execution_id) throw new GoneError("execution is gone");
          throw new Error("transient");
        },
      },
      {
        ...FAST,
        backoff: { initialMs: 100, factor: 1, maxMs: 100 },
        drop: (err, message, ctx) => {
          if (!(err instanceof GoneError)) return false;
          const id = message.payload.execution_id;
          dropped.push({ err, key: message.key, id, delivery: ctx.deliveryCount });
          return true;
        },
      },
    );
    workers.push(worker);
    await h.bus.publish("executionRequested", gone);
    await h.bus.publish("executionRequested", flaky);

    // Any other error still takes the normal path: retried, then dead-lettered.
    const letters = await deadLetters(h, "the other message's dead letter");
    expect(letters.map((l) => JSON.parse(l.letter.data).execution_id)).toEqual([
      flaky.execution_id,
    ]);
    await sleep(300);
    expect(dropped).toEqual([
      { err: expect.any(GoneError), key: "executionRequested", id: gone.execution_id, delivery: 1 },
    ]);
    expect(attempts.filter((id) => id === gone.execution_id)).toHaveLength(1);
    expect(attempts.filter((id) => id === flaky.execution_id)).toHaveLength(2);
    expect(await h.admin.workBacklog("runner")).toBe(0);
  });

  it("drops nothing when the drop option itself throws", async () => {
    const h = await fresh({ consumers: { runner: { maxDeliver: 2 } } });
    let calls = 0;
    const worker = await h.bus.consume(
      "runner",
      {
        executionRequested: async () => {
          throw new Error("transient");
        },
      },
      {
        ...FAST,
        backoff: { initialMs: 100, factor: 1, maxMs: 100 },
        drop: () => {
          calls++;
          throw new Error("a buggy drop rule");
        },
      },
    );
    workers.push(worker);
    await h.bus.publish("executionRequested", executionRequested());
    const letters = await deadLetters(h);
    expect(letters[0]?.letter.error).toBe("transient");
    expect(calls).toBe(2);
  });

  it("redelivers a failing message with growing backoff, then dead-letters it with the error", async () => {
    const h = await fresh({ consumers: { runner: { maxDeliver: 3 } } });
    const attempts: { at: number; delivery: number }[] = [];
    const worker = await h.bus.consume(
      "runner",
      {
        executionRequested: async (_p, ctx) => {
          attempts.push({ at: Date.now(), delivery: ctx.deliveryCount });
          throw new Error(`LLM provider unreachable (attempt ${ctx.deliveryCount})`);
        },
      },
      { ...FAST, backoff: { initialMs: 300, factor: 3, maxMs: 10_000 } },
    );
    workers.push(worker);
    const payload = executionRequested();
    await h.bus.publish("executionRequested", payload);

    const page = await eventually(
      async () => {
        const p = await h.admin.listDeadLetters();
        return p.items.length > 0 ? p : undefined;
      },
      10_000,
      "a dead letter",
    );
    expect(attempts.map((a) => a.delivery)).toEqual([1, 2, 3]);
    const [gap1, gap2] = [attempts[1]!.at - attempts[0]!.at, attempts[2]!.at - attempts[1]!.at];
    expect(gap1).toBeGreaterThanOrEqual(300);
    expect(gap2).toBeGreaterThanOrEqual(900);
    expect(gap2).toBeGreaterThan(gap1);

    expect(page.items).toHaveLength(1);
    const letter = page.items[0]!.letter;
    expect(letter).toMatchObject({
      original_subject: WORK_SUBJECTS.executionRequested,
      stream: `TARSY_WORK${h.streamSuffix}`,
      stream_seq: 1,
      deliveries: 3,
      error: "LLM provider unreachable (attempt 3)",
    });
    expect(JSON.parse(letter.data)).toEqual(payload);
    expect(await workLeft(h)).toBe(0);
    // Settled for good: three deliveries in the server's count, nothing left to redeliver.
    expect(await deliveryState(h, "runner")).toEqual({ deliveries: 3, pending: 0, unacked: 0 });
    expect(attempts).toHaveLength(3);
  });

  it("dead-letters a message that is not JSON or not a valid payload at once, without calling the handler", async () => {
    const h = await fresh();
    const handled: string[] = [];
    const worker = await h.bus.consume(
      "orchestrator",
      {
        sessionSubmitted: async (p) => void handled.push(p.session_id),
        chatSubmitted: async (p) => void handled.push(p.chat_id),
        cancelRequested: async (p) => void handled.push(p.session_id),
        deadline: async (p) => void handled.push(p.session_id),
        executionFinished: async (p) => void handled.push(p.execution_id),
      },
      FAST,
    );
    workers.push(worker);
    // Raw publishes that bypass the typed API, as a buggy or foreign producer would.
    const js = (await import("@nats-io/jetstream")).jetstream(h.raw);
    await js.publish(`${h.prefix}.${WORK_SUBJECTS.sessionSubmitted}`, "{not json");
    await js.publish(
      `${h.prefix}.${WORK_SUBJECTS.sessionSubmitted}`,
      JSON.stringify({ v: 1, session_id: "s-bad", submitted_at: now() }),
    );
    await h.bus.publish("sessionSubmitted", {
      v: 1,
      session_id: "s-good",
      alert_type: "kubernetes",
      chain_id: "k8s",
      submitted_at: now(),
    });

    const page = await eventually(async () => {
      const p = await h.admin.listDeadLetters();
      return p.items.length >= 2 ? p : undefined;
    });
    await eventually(() => (handled.length > 0 ? true : undefined));
    expect(handled).toEqual(["s-good"]);
    const letters = page.items.map((i) => i.letter);
    expect(letters.map((l) => l.deliveries)).toEqual([1, 1]);
    expect(letters[0]?.error).toMatch(/^invalid JSON/);
    expect(letters[0]?.data).toBe("{not json");
    expect(letters[1]?.error).toMatch(/^invalid sessionSubmitted payload: .*alert_type/);
    expect(letters[1]?.original_subject).toBe(WORK_SUBJECTS.sessionSubmitted);
  });

  it("redrives a dead letter to its original subject and removes it from the dead letters", async () => {
    const h = await fresh({ consumers: { runner: { maxDeliver: 1 } } });
    let broken = true;
    const done: string[] = [];
    const worker = await h.bus.consume(
      "runner",
      {
        executionRequested: async (p) => {
          if (broken) throw new Error("tool server down");
          done.push(p.execution_id);
        },
      },
      FAST,
    );
    workers.push(worker);
    const payload = executionRequested();
    await h.bus.publish("executionRequested", payload);
    const page = await eventually(async () => {
      const p = await h.admin.listDeadLetters();
      return p.items.length ? p : undefined;
    });
    broken = false;
    const seq = page.items[0]!.seq;
    await h.admin.redriveDeadLetter(seq);
    await eventually(() => (done.length ? true : undefined), 5_000, "redriven work");
    expect(done).toEqual([payload.execution_id]);
    expect((await h.admin.listDeadLetters()).items).toEqual([]);
    await expect(h.admin.redriveDeadLetter(seq)).rejects.toMatchObject({ code: "bus_not_found" });
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
    const h = await harness({}, false);
    open.push(h);
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
