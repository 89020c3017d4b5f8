import { type AddressInfo, createServer } from "node:net";
import { listLLMInteractions, listMessages, listSessionTimeline } from "@tarsy/db";
import { createLlmClient, type LlmClient } from "@tarsy/llm-client";
import { describe, expect, test } from "vitest";
import { runExecution } from "../src/execution.ts";
import {
  answer,
  badRequest,
  client,
  cutAfter,
  echo,
  env,
  execution,
  fakes,
  fallbackCount,
  fallbackEvents,
  POLICY,
  run,
  silent,
  stallAfter,
  unauthorized,
  unavailable,
  useFallbackRig,
} from "./fallback-rig.ts";
import { record, runnerDeps, seedExecution, waitFor } from "./support.ts";

/** Each way a provider or llm-service fails, and when the runner switches provider for it. */
useFallbackRig();

describe("fallback triggers", () => {
  test("bad credentials switch at once, and the switch is recorded everywhere", async () => {
    fakes.primary.enqueue(unauthorized);
    fakes.backup1.enqueue(answer("Backup analysis: the pod is OOMKilled."));
    const { request, executionId, finished, metrics } = await run();
    expect(finished).toMatchObject({
      status: "completed",
      final_analysis: "Backup analysis: the pod is OOMKilled.",
    });
    expect(fakes.primary.requests).toHaveLength(1);
    expect(fakes.backup1.requests[0]?.body).toMatchObject({ model: "gpt-backup-1" });
    const [event, ...more] = await fallbackEvents(request.session_id);
    expect(more).toEqual([]);
    expect(event).toMatchObject({
      original_provider: "primary",
      original_backend: "langchain",
      fallback_provider: "backup1",
      fallback_backend: "langchain",
      trigger: "immediate",
      attempt: 1,
    });
    expect(String(event?.reason)).toContain("HTTP 401");
    const row = await execution(executionId);
    expect(row).toMatchObject({
      llmProvider: "backup1",
      backend: "langchain",
      originalLlmProvider: "primary",
      originalBackend: "langchain",
    });
    expect(await fallbackCount(metrics)).toEqual([
      { from_provider: "primary", to_provider: "backup1", trigger: "immediate", value: 1 },
    ]);
    // Each request is counted against the model that served (or failed) it.
    const requests = (await metrics.llmRequests.get()).values;
    expect(requests.map((v) => [v.labels.model, v.labels.status, v.value])).toEqual([
      ["gpt-primary", "error", 1],
      ["gpt-backup-1", "ok", 1],
    ]);
    // The trace: the failed call on the primary, then the answer on the fallback, each named.
    const calls = await listLLMInteractions(env.db.prisma, { executionId });
    expect(calls.map((c) => [c.provider, c.modelName, c.errorMessage === null])).toEqual([
      ["backup1", "gpt-backup-1", true],
    ]);
  });

  test("a transient error llm-service has retried all it may switches at once", async () => {
    fakes.primary.enqueue(unavailable, unavailable);
    fakes.backup1.enqueue(answer("Answer from backup."));
    const { request, finished } = await run();
    expect(finished).toMatchObject({ status: "completed", final_analysis: "Answer from backup." });
    // llm-service's own retry (1) ran out; the runner did not try the primary again.
    expect(fakes.primary.requests).toHaveLength(2);
    expect(await fallbackEvents(request.session_id)).toMatchObject([
      { fallback_provider: "backup1", trigger: "immediate" },
    ]);
  });

  test("provider errors switch after two in a row; one alone is retried on the same provider", async () => {
    fakes.primary.enqueue(badRequest, answer("Primary recovered."));
    const once = await run();
    expect(once.finished).toMatchObject({ final_analysis: "Primary recovered." });
    expect(await fallbackEvents(once.request.session_id)).toEqual([]);
    expect((await execution(once.executionId)).originalLlmProvider).toBeNull();

    fakes.primary.requests.length = 0;
    fakes.primary.enqueue(badRequest, badRequest);
    fakes.backup1.enqueue(answer("Backup after two errors."));
    const twice = await run();
    expect(twice.finished).toMatchObject({ final_analysis: "Backup after two errors." });
    expect(fakes.primary.requests).toHaveLength(2);
    expect(await fallbackEvents(twice.request.session_id)).toMatchObject([
      { fallback_provider: "backup1", trigger: "provider_errors", attempt: 1 },
    ]);
  });

  test("no first chunk within the provider's timeout, twice, switches", async () => {
    fakes.primary.enqueue(silent, silent);
    fakes.backup1.enqueue(answer("Backup answered in time."));
    const { request, finished } = await run();
    expect(finished).toMatchObject({ final_analysis: "Backup answered in time." });
    const [event] = await fallbackEvents(request.session_id);
    expect(event).toMatchObject({ trigger: "provider_errors" });
    // The provider's own 1.5 s applied, not the runner's 60 s default.
    expect(String(event?.reason)).toContain("within 1500 ms");
  });

  test("a stream that stalls mid-answer, twice, switches on its own counter; viewers see one answer", async () => {
    fakes.primary.enqueue(stallAfter("The pod is "), stallAfter("The pod is "));
    fakes.backup1.enqueue(answer("Backup: the pod is OOMKilled."));
    const request = await seedExecution(env);
    const rec = await record(env, request.session_id);
    try {
      const finished = await runExecution(
        runnerDeps(env, client, echo, { llmRetry: POLICY }),
        request,
        new AbortController().signal,
      );
      expect(finished).toMatchObject({ final_analysis: "Backup: the pod is OOMKilled." });
      const [event] = await fallbackEvents(request.session_id);
      expect(event).toMatchObject({ trigger: "partial_stream" });
      expect(String(event?.reason)).toContain("stalled for 1500 ms");
      const timeline = await listSessionTimeline(env.db.prisma, request.session_id);
      const final = timeline.find((e) => e.eventType === "final_analysis");
      expect(final?.content).toBe("Backup: the pod is OOMKilled.");
      await waitFor("the answer's chunks", () =>
        rec.chunks.some((c) => c.event_id === final?.id && c.delta.includes("OOMKilled"))
          ? true
          : undefined,
      );
      const shown = rec.chunks
        .filter((c) => c.event_id === final?.id)
        .reduce((text, c) => (c.reset ? c.delta : text + c.delta), "");
      expect(shown).toBe("Backup: the pod is OOMKilled.");
      const messages = (await listMessages(env.db.prisma, request.execution_id)).filter(
        (m) => m.role === "assistant",
      );
      expect(messages.map((m) => m.content)).toEqual(["Backup: the pod is OOMKilled."]);
    } finally {
      rec.stop();
    }
  });

  test("a stream cut after output, twice, switches as a partial stream", async () => {
    fakes.primary.enqueue(cutAfter("Half "), cutAfter("Half "));
    fakes.backup1.enqueue(answer("Whole answer."));
    const { request, finished } = await run();
    expect(finished).toMatchObject({ final_analysis: "Whole answer." });
    expect(fakes.primary.requests).toHaveLength(2);
    expect(await fallbackEvents(request.session_id)).toMatchObject([
      { trigger: "partial_stream", fallback_provider: "backup1" },
    ]);
  });
});

describe("fallback on transport failures", () => {
  test("llm-service unreachable for the provider's calls, twice, switches", async () => {
    // Calls for the primary go to an address where nothing listens (connection refused);
    // the others to the running llm-service.
    const dead = await new Promise<number>((resolve) => {
      const probe = createServer();
      probe.listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const unreachable = createLlmClient({ address: `127.0.0.1:${dead}` });
    const routed: Pick<LlmClient, "generate"> = {
      generate: (input, options) =>
        input.config.model === "gpt-primary"
          ? unreachable.generate(input, options)
          : client.generate(input, options),
    };
    fakes.backup1.enqueue(answer("Backup through a reachable llm-service."));
    const request = await seedExecution(env);
    try {
      const finished = await runExecution(
        runnerDeps(env, routed as LlmClient, echo, { llmRetry: POLICY }),
        request,
        new AbortController().signal,
      );
      expect(finished).toMatchObject({ final_analysis: "Backup through a reachable llm-service." });
      expect(await fallbackEvents(request.session_id)).toMatchObject([
        { trigger: "provider_errors", fallback_provider: "backup1" },
      ]);
      const [event] = await fallbackEvents(request.session_id);
      expect(String(event?.reason)).toContain("llm-service unavailable");
    } finally {
      unreachable.close();
    }
  });
});
