import { type ExecutionRequested, WORK_SUBJECTS } from "@tarsy/contracts";
import { getExecution, listMessages, listSessionTimeline } from "@tarsy/db";
import { workStored } from "@tarsy/testkit";
import { afterEach, describe, expect, test } from "vitest";
import { ExecutionTakenOverError } from "../src/errors.ts";
import { runExecution } from "../src/execution.ts";
import { startWorker } from "../src/worker.ts";
import { StandInGateway } from "./stand-in-gateway.ts";
import {
  collectFinished,
  createEnv,
  type Env,
  record,
  runnerDeps,
  seedExecution,
  startLlm,
  startRunnerProcess,
  waitFor,
} from "./support.ts";

let env: Env | undefined;
let stops: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const stop of stops.reverse()) await stop();
  stops = [];
  await env?.cleanup();
  env = undefined;
});

const noTools = new StandInGateway({});
const strip = ({ executions: _, ...request }: ExecutionRequested & { executions: string[] }) =>
  request;

async function setup(script: unknown, options: Parameters<typeof createEnv>[0] = {}) {
  env = await createEnv(options);
  const llm = await startLlm(script);
  stops.push(llm.stop);
  const finished = await collectFinished(env.bus);
  stops.push(finished.stop);
  return { env, llm, finished };
}

const slowText = (text: string) => ({ text, chunk_size: 2, chunk_delay_ms: 150 });

describe("runner worker", () => {
  test("a cancel published for the session stops its execution, which still reports back", async () => {
    const { env, llm, finished } = await setup([slowText("a long answer that takes a while")]);
    const worker = await startWorker(runnerDeps(env, llm.client, noTools), {
      concurrency: 2,
      shutdownGraceMs: 1_000,
    });
    stops.push(() => worker.stop());
    const request = await seedExecution(env);
    const rec = await record(env, request.session_id);
    stops.push(rec.stop);
    await env.bus.publish("executionRequested", strip(request));
    await waitFor("streaming", () => rec.chunks.length > 0 || undefined);
    env.bus.publishTransient("cancelControl", {
      v: 1,
      session_id: request.session_id,
      scope: "session",
      reason: "cancelled",
      timestamp: new Date().toISOString(),
    });
    const done = await waitFor("finished", () => finished.list[0]);
    expect(done).toMatchObject({
      execution_id: request.execution_id,
      status: "cancelled",
      final_analysis: null,
    });
    const timeline = await listSessionTimeline(env.db.prisma, request.session_id);
    expect(timeline.map((e) => [e.eventType, e.status])).toEqual([["llm_response", "cancelled"]]);
    expect(worker.active()).toBe(0);
  });

  test("the session deadline times the execution out, saying which limit ran out", async () => {
    // Halfway to the deadline the slow call is cut for the wrap-up; the forced conclusion is
    // just as slow and overruns the deadline itself.
    const { env, llm, finished } = await setup([
      slowText("a long answer that takes a while"),
      slowText("a conclusion that comes too late"),
    ]);
    const worker = await startWorker(runnerDeps(env, llm.client, noTools), {
      concurrency: 1,
      shutdownGraceMs: 1_000,
    });
    stops.push(() => worker.stop());
    // The orchestrator's deadline check writes the same words when it comes first.
    const why = "session timed out after 20s (queue.session_timeout)";
    const request = await seedExecution(env, {
      deadlineAt: new Date(Date.now() + 1_500),
      deadlineReason: why,
    });
    await env.bus.publish("executionRequested", strip(request));
    const done = await waitFor("finished", () => finished.list[0]);
    expect(done).toMatchObject({ status: "timed_out", error: why });
    const execution = await getExecution(env.db.prisma, request.execution_id);
    expect(execution?.errorMessage).toBe(why);
  });

  test("a deadline without a reason still times the execution out", async () => {
    const { env, llm, finished } = await setup([
      slowText("a long answer that takes a while"),
      slowText("a conclusion that comes too late"),
    ]);
    const worker = await startWorker(runnerDeps(env, llm.client, noTools), {
      concurrency: 1,
      shutdownGraceMs: 1_000,
    });
    stops.push(() => worker.stop());
    const request = await seedExecution(env, { deadlineAt: new Date(Date.now() + 1_500) });
    await env.bus.publish("executionRequested", strip(request));
    const done = await waitFor("finished", () => finished.list[0]);
    expect(done).toMatchObject({ status: "timed_out", error: "execution timed out" });
  });

  test("runs at most `concurrency` executions at once and finishes them all", async () => {
    const { env, llm, finished } = await setup([{ delay_ms: 600, text: "done" }]);
    const worker = await startWorker(runnerDeps(env, llm.client, noTools), {
      concurrency: 2,
      shutdownGraceMs: 1_000,
    });
    stops.push(() => worker.stop());
    let peak = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, worker.active());
    }, 10);
    stops.push(() => clearInterval(sampler));
    const requests = await Promise.all([1, 2, 3, 4, 5].map(() => seedExecution(env!)));
    for (const request of requests) await env.bus.publish("executionRequested", strip(request));
    await waitFor("all finished", () => finished.list.length === 5 || undefined, 20_000);
    expect(
      finished.list.every((f) => f.status === "completed" && f.final_analysis === "done"),
    ).toBe(true);
    expect(peak).toBe(2);
  });

  test("on shutdown an unfinished execution is handed back and another runner finishes it", async () => {
    const { env, llm, finished } = await setup([
      slowText("this answer is long enough to outlive the grace period of the first runner"),
      { text: "Finished by the second runner." },
    ]);
    const first = await startWorker(
      runnerDeps(env, llm.client, noTools, { runnerId: "runner-a" }),
      {
        concurrency: 1,
        shutdownGraceMs: 300,
      },
    );
    const request = await seedExecution(env);
    const rec = await record(env, request.session_id);
    stops.push(rec.stop);
    await env.bus.publish("executionRequested", strip(request));
    await waitFor("streaming", () => rec.chunks.length > 0 || undefined);
    const report = await first.stop();
    expect(report.handedBack).toBe(1);
    expect(finished.list).toHaveLength(0);

    const otherBus = await env.testBus.connectAnother();
    const second = await startWorker(
      runnerDeps(env, llm.client, noTools, { runnerId: "runner-b", bus: otherBus }),
      { concurrency: 1, shutdownGraceMs: 300 },
    );
    stops.push(() => second.stop());
    const done = await waitFor("finished", () => finished.list[0], 15_000);
    expect(done).toMatchObject({
      status: "completed",
      final_analysis: "Finished by the second runner.",
    });
    const execution = await getExecution(env.db.prisma, request.execution_id);
    expect(execution).toMatchObject({ status: "completed", attempt: 2, runnerId: "runner-b" });
    // The second attempt continued the stored prompt: nothing was kept but the prompt (no turn
    // had ended), so the cut call is made again.
    const timeline = await listSessionTimeline(env.db.prisma, request.session_id);
    expect(timeline.map((e) => [e.eventType, e.status])).toEqual([
      ["llm_response", "failed"],
      ["execution_resumed", "completed"],
      ["final_analysis", "completed"],
    ]);
    expect(timeline[1]?.metadata).toMatchObject({ mode: "resumed", attempt: 2, llm_turns: 0 });
    const messages = await listMessages(env.db.prisma, request.execution_id);
    expect(messages.map((m) => m.role)).toEqual(["system", "user", "assistant"]);
  });

  test("a runner process killed mid-execution: the work is redelivered to another runner and finished", async () => {
    const { env, llm, finished } = await setup(
      [
        slowText("the killed runner never finishes this answer because it dies first"),
        { text: "Recovered by the surviving runner." },
      ],
      { runnerAckWaitMs: 2_000 },
    );
    const doomed = startRunnerProcess(env, llm.address, {
      TARSY_PROVISION_STREAMS: "false",
      RUNNER_ID: "runner-doomed",
    });
    stops.push(() => doomed.stop());
    const request = await seedExecution(env);
    const rec = await record(env, request.session_id);
    stops.push(rec.stop);
    await env.bus.publish("executionRequested", strip(request));
    await waitFor(
      "the runner process streaming",
      () => {
        if (doomed.child.exitCode !== null) throw new Error(doomed.output.join(""));
        return rec.chunks.length > 0 || undefined;
      },
      60_000,
    );
    doomed.kill();
    const killedAt = Date.now();

    const survivor = await startWorker(
      runnerDeps(env, llm.client, noTools, { runnerId: "runner-survivor" }),
      { concurrency: 1, shutdownGraceMs: 300 },
    );
    stops.push(() => survivor.stop());
    const done = await waitFor("finished", () => finished.list[0], 20_000);
    expect(done).toMatchObject({
      status: "completed",
      final_analysis: "Recovered by the surviving runner.",
    });
    expect(Date.now() - killedAt).toBeLessThan(10_000);
    const execution = await getExecution(env.db.prisma, request.execution_id);
    expect(execution).toMatchObject({
      attempt: 2,
      runnerId: "runner-survivor",
      status: "completed",
    });
    const timeline = await listSessionTimeline(env.db.prisma, request.session_id);
    expect(timeline.map((e) => [e.eventType, e.status])).toEqual([
      ["llm_response", "failed"],
      ["execution_resumed", "completed"],
      ["final_analysis", "completed"],
    ]);
    expect(finished.list).toHaveLength(1);
  }, 120_000);

  test("SIGTERM lets the runner process finish its execution within the grace period, then exit 0", async () => {
    const { env, llm, finished } = await setup([
      { text: "finished during the grace period", chunk_size: 4, chunk_delay_ms: 100 },
    ]);
    const runner = startRunnerProcess(env, llm.address, {
      TARSY_PROVISION_STREAMS: "false",
      RUNNER_ID: "runner-graceful",
      RUNNER_SHUTDOWN_GRACE_MS: "10000",
    });
    stops.push(() => runner.stop());
    const request = await seedExecution(env);
    const rec = await record(env, request.session_id);
    stops.push(rec.stop);
    await env.bus.publish("executionRequested", strip(request));
    await waitFor(
      "the runner process streaming",
      () => {
        if (runner.child.exitCode !== null) throw new Error(runner.output.join(""));
        return rec.chunks.length > 0 || undefined;
      },
      60_000,
    );
    const code = await runner.stop();
    expect(code).toBe(0);
    const done = await waitFor("finished", () => finished.list[0], 10_000);
    expect(done).toMatchObject({
      status: "completed",
      final_analysis: "finished during the grace period",
    });
    const execution = await getExecution(env.db.prisma, request.execution_id);
    expect(execution).toMatchObject({ attempt: 1, runnerId: "runner-graceful" });
    // The execution was still running when the signal came, and finished before the exit.
    const log = runner.output.join("");
    expect(log.indexOf('"msg":"shutting down"')).toBeGreaterThan(-1);
    expect(log.indexOf('"msg":"execution finished"')).toBeGreaterThan(
      log.indexOf('"msg":"shutting down"'),
    );
  }, 120_000);

  test("when a delivery is taken over by a newer attempt, only the newer one reports", async () => {
    const { env, llm, finished } = await setup([
      { text: "the first attempt is slow to answer", chunk_size: 4, chunk_delay_ms: 400 },
      { text: "attempt two" },
    ]);
    const deps = runnerDeps(env, llm.client, noTools, { heartbeatMs: 200 });
    const request = await seedExecution(env);
    const rec = await record(env, request.session_id);
    stops.push(rec.stop);
    const first = runExecution(deps, strip(request), new AbortController().signal);
    const firstOutcome = first.then(
      () => "finished",
      (err: unknown) => (err instanceof ExecutionTakenOverError ? "taken over" : String(err)),
    );
    await waitFor("first attempt streaming", () => rec.chunks.length > 0 || undefined);
    const second = await runExecution(deps, strip(request), new AbortController().signal);
    expect(second).toMatchObject({ status: "completed", final_analysis: "attempt two" });
    expect(await firstOutcome).toBe("taken over");
    const execution = await getExecution(env.db.prisma, request.execution_id);
    expect(execution).toMatchObject({
      attempt: 2,
      status: "completed",
      finalAnalysis: "attempt two",
    });
    await waitFor("finished published", () => finished.list[0]);
    // Both attempts have returned, so every report they made is stored; once the collector has
    // taken them all off the work queue, its list is complete.
    await waitFor(
      "every report collected",
      async () => (await workStored(env.testBus, WORK_SUBJECTS.executionFinished)) === 0,
    );
    expect(finished.list).toHaveLength(1);
  });
});
