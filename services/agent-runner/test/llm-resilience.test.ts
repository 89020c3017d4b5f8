import { createServer } from "node:net";
import { Writable } from "node:stream";
import { listLLMInteractions, listMessages, listSessionTimeline } from "@tarsy/db";
import { createLlmClient } from "@tarsy/llm-client";
import { createLlmServer, parseScript } from "@tarsy/llm-service";
import { createMetrics, startOpsServer } from "@tarsy/metrics";
import { createLogger } from "@tarsy/runtime";
import { describe, expect } from "vitest";
import { runExecution } from "../src/execution.ts";
import { llmReadiness } from "../src/llm-readiness.ts";
import type { LlmRetryPolicy } from "../src/llm-retry.ts";
import {
  captureLogger,
  type Env,
  logger,
  record,
  runnerDeps,
  seedExecution,
  startLlm,
  runnerTest as test,
  waitFor,
} from "./support.ts";

const FAST: LlmRetryPolicy = {
  budgetMs: 10_000,
  baseDelayMs: 50,
  maxDelayMs: 200,
  firstChunkTimeoutMs: 400,
  stallTimeoutMs: 400,
};

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const address = server.address();
  await new Promise((done) => server.close(done));
  if (!address || typeof address === "string") throw new Error("no port");
  return address.port;
}

async function storedAnswers(env: Env, executionId: string) {
  const llmRows = await listLLMInteractions(env.db.prisma, { executionId });
  const messages = (await listMessages(env.db.prisma, executionId)).filter(
    (m) => m.role === "assistant",
  );
  return { llmRows, messages };
}

describe("first-chunk and stall timeouts", () => {
  test("a call that sends nothing is abandoned at the first-chunk timeout and retried", async ({
    env,
    llm,
    echo,
  }) => {
    const { client } = await llm([
      { delay_ms: 5_000, text: "too late" },
      { text: "Final answer." },
    ]);
    const request = await seedExecution(env);
    const started = Date.now();
    const finished = await runExecution(
      runnerDeps(env, client, echo, { llmRetry: FAST }),
      request,
      new AbortController().signal,
    );
    expect(finished).toMatchObject({ status: "completed", final_analysis: "Final answer." });
    expect(Date.now() - started).toBeLessThan(4_000);
    const timeline = await listSessionTimeline(env.db.prisma, request.session_id);
    expect(timeline.map((e) => [e.eventType, e.status, e.content])).toEqual([
      ["final_analysis", "completed", "Final answer."],
    ]);
    const { llmRows, messages } = await storedAnswers(env, request.execution_id);
    expect(llmRows.map((r) => [r.responseText, r.errorMessage, r.responseMetadata])).toEqual([
      ["Final answer.", null, { attempts: 2 }],
    ]);
    expect(messages.map((m) => m.content)).toEqual(["Final answer."]);
  });

  test("a stream that stalls mid-answer is retried; viewers get a reset, the store one answer", async ({
    env,
    stops,
    llm,
    echo,
  }) => {
    const { client } = await llm([
      { text: "The pod is OOMKilled because", chunk_size: 4, chunk_delay_ms: 3_000 },
      { text: "The pod is OOMKilled: raise its memory limit.", chunk_size: 8 },
    ]);
    const request = await seedExecution(env);
    const rec = await record(env, request.session_id);
    stops.push(rec.stop);
    const finished = await runExecution(
      runnerDeps(env, client, echo, { llmRetry: FAST }),
      request,
      new AbortController().signal,
    );
    const answer = "The pod is OOMKilled: raise its memory limit.";
    expect(finished).toMatchObject({ status: "completed", final_analysis: answer });
    const timeline = await listSessionTimeline(env.db.prisma, request.session_id);
    expect(timeline.map((e) => [e.eventType, e.content])).toEqual([["final_analysis", answer]]);
    const eventId = timeline[0]?.id;
    await waitFor("the last chunk", () =>
      rec.chunks
        .map((c) => c.delta)
        .join("")
        .endsWith("limit.")
        ? true
        : undefined,
    );
    // What a viewer applying the chunks in order ends with: the retried answer only.
    const chunks = rec.chunks.filter((c) => c.event_id === eventId);
    expect(chunks[0]).toMatchObject({ delta: "The " });
    expect(chunks.filter((c) => c.reset)).toHaveLength(1);
    const shown = chunks.reduce((text, c) => (c.reset ? c.delta : text + c.delta), "");
    expect(shown).toBe(answer);
    const { llmRows, messages } = await storedAnswers(env, request.execution_id);
    expect(llmRows.map((r) => r.responseText)).toEqual([answer]);
    expect(messages.map((m) => m.content)).toEqual([answer]);
  });
});

describe("llm-service down", () => {
  test("a call waits for llm-service to come up on its address and completes", async ({
    env,
    stops,
    echo,
  }) => {
    const port = await freePort();
    const client = createLlmClient({ address: `127.0.0.1:${port}` });
    stops.push(() => client.close());
    const request = await seedExecution(env);
    const log = captureLogger();
    const running = runExecution(
      runnerDeps(env, client, echo, { llmRetry: FAST, logger: log.logger }),
      request,
      new AbortController().signal,
    );
    // The runner has failed to connect at least once before the server exists.
    await waitFor("a failed attempt", () =>
      log.lines.find((l) => l.msg === "LLM call cut; retrying"),
    );
    const server = createLlmServer({
      logger,
      getSecret: () => undefined,
      script: parseScript(JSON.stringify([{ text: "Came back." }]), "test script"),
    });
    await server.listen("127.0.0.1", port);
    stops.push(() => server.shutdown(500));
    const finished = await running;
    expect(finished).toMatchObject({ status: "completed", final_analysis: "Came back." });
    const { llmRows } = await storedAnswers(env, request.execution_id);
    expect(llmRows).toHaveLength(1);
    const metadata = llmRows[0]?.responseMetadata as { attempts?: number } | null | undefined;
    expect(metadata?.attempts).toBeGreaterThan(1);
  });

  test("past the budget the execution fails with the cause named once, in the row and the log", async ({
    env,
    stops,
    echo,
  }) => {
    const port = await freePort();
    const client = createLlmClient({ address: `127.0.0.1:${port}` });
    stops.push(() => client.close());
    const lines: string[] = [];
    const captured = createLogger({
      service: "agent-runner-test",
      level: "warn",
      destination: new Writable({
        write(chunk, _enc, done) {
          lines.push(String(chunk));
          done();
        },
      }),
    });
    const request = await seedExecution(env);
    const finished = await runExecution(
      runnerDeps(env, client, echo, {
        llmRetry: { ...FAST, budgetMs: 1_000 },
        logger: captured,
      }),
      request,
      new AbortController().signal,
    );
    expect(finished.status).toBe("failed");
    const error = finished.error ?? "";
    expect(error).toMatch(/^llm-service unavailable: .+ \(gave up after \d+ attempts in 1 s\)$/);
    expect(error.split("llm-service unavailable").length - 1).toBe(1);
    expect(error).not.toContain("14 UNAVAILABLE");
    const failed = lines.find((l) => l.includes('"execution failed"'));
    expect(failed).toBeDefined();
    const logged = (JSON.parse(failed as string) as { err: { message: string } }).err.message;
    expect(logged).toBe(error);
    const retries = lines.filter((l) => l.includes('"LLM call cut; retrying"'));
    expect(retries.length).toBeGreaterThanOrEqual(2);
  });
});

describe("/ready", () => {
  test("names llm-service: ok while it serves, failing once it is gone", async ({ stops }) => {
    const started = await startLlm([]);
    const ops = await startOpsServer({
      host: "127.0.0.1",
      port: 0,
      registry: createMetrics("agent-runner", { processMetrics: false }).registry,
      logger,
      ready: { "llm-service": llmReadiness(started.client, 500) },
    });
    stops.push(() => ops.close());
    const ready = await fetch(`${ops.url}/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({
      status: "ready",
      checks: { "llm-service": { status: "ok" } },
    });
    await started.server.shutdown(100);
    const down = await fetch(`${ops.url}/ready`);
    expect(down.status).toBe(503);
    const body = (await down.json()) as { checks: Record<string, { error: string }> };
    expect(body.checks["llm-service"]?.error).toMatch(/llm-service/);
    started.client.close();
  });
});
