import { WORK_SUBJECTS } from "@tarsy/contracts";
import { describe, expect, it } from "vitest";
import { deadLetters, deliveryState, FAST, useConsumeRig } from "./consume-support.ts";
import { eventually, executionRequested, now, sleep, workLeft } from "./support.ts";

const { fresh, workers } = useConsumeRig();

describe("consume: failures, drops and dead letters", () => {
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
        scoreRequested: async (p) => void handled.push(p.score_id),
        feedbackSubmitted: async (p) => void handled.push(p.reflection_id),
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
});
