import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "@tarsy/config";
import { listSessionTimeline } from "@tarsy/db";
import { createLlmClient, type LlmClient } from "@tarsy/llm-client";
import { createLlmServer, type LlmServer } from "@tarsy/llm-service";
import { createMetrics } from "@tarsy/metrics";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { geminiChunk, geminiUsage } from "../../../llm-service/test/fakes/gemini.ts";
import {
  type FakeProvider,
  type Responder,
  respondJson,
  respondSse,
  startFakeProvider,
} from "../../../llm-service/test/fakes/http.ts";
import { openAiError, openAiStream } from "../../../llm-service/test/fakes/openai.ts";
import { runExecution } from "../src/execution.ts";
import type { LlmRetryPolicy } from "../src/llm-retry.ts";
import { StandInGateway } from "./stand-in-gateway.ts";
import {
  createEnv,
  type Env,
  logger,
  record,
  runnerDeps,
  seedExecution,
  waitFor,
} from "./support.ts";

/**
 * Provider fallback against loopback fakes of the providers' HTTP APIs, through a real
 * llm-service: each fake fails the way a provider does, and the runner must switch.
 */

const FAKES = ["primary", "backup1", "backup2", "other", "gemini"] as const;
type FakeName = (typeof FAKES)[number];
const fakes = {} as Record<FakeName, FakeProvider>;
const KEYS: Record<string, string> = {
  PRIMARY_KEY: "sk-primary-0123456789",
  BACKUP_KEY: "sk-backup-0123456789",
  GEMINI_KEY: "gemini-key-0123456789",
};
let server: LlmServer;
let client: LlmClient;
let configDir: string;

/** The runner's own first-chunk and stall timeouts are long: the providers' overrides apply. */
const POLICY: LlmRetryPolicy = {
  budgetMs: 20_000,
  baseDelayMs: 20,
  maxDelayMs: 100,
  firstChunkTimeoutMs: 60_000,
  stallTimeoutMs: 60_000,
};

function writeConfig(): string {
  const dir = mkdtempSync(join(tmpdir(), "runner-fallback-"));
  const openai = (name: FakeName, model: string, key: string) => `  ${name}:
    type: openai
    model: ${model}
    api_key_env: ${key}
    base_url: ${fakes[name].url}/v1
    initial_response_timeout: 1500ms
    stall_timeout: 1500ms
`;
  writeFileSync(
    join(dir, "llm-providers.yaml"),
    `llm_providers:
${openai("primary", "gpt-primary", "PRIMARY_KEY")}${openai("backup1", "gpt-backup-1", "BACKUP_KEY")}${openai("backup2", "gpt-backup-2", "BACKUP_KEY")}${openai("other", "gpt-other", "PRIMARY_KEY")}  gemini:
    type: google
    model: gemini-fake
    api_key_env: GEMINI_KEY
    base_url: ${fakes.gemini.url}
`,
  );
  writeFileSync(
    join(dir, "tarsy.yaml"),
    `defaults:
  llm_provider: primary
  max_iterations: 3
  iteration_timeout: 30s
  fallback_providers:
    - provider: backup1
      backend: langchain
    - provider: backup2
      backend: langchain
mcp_servers:
  everything:
    transport: { type: stdio, command: "true" }
agents:
  InvestigatorAgent:
    mcp_servers: [everything]
  SearchAgent:
    native_tools: { google_search: true }
agent_chains:
  test-chain:
    alert_types: [test-alert]
    stages:
      - name: analysis
        agents: [InvestigatorAgent]
      - name: parallel
        agents:
          - name: InvestigatorAgent
          - name: InvestigatorAgent
            llm_provider: other
      - name: search
        agents: [SearchAgent]
        fallback_providers:
          - provider: backup1
            backend: langchain
          - provider: gemini
            backend: google-native
      - name: no-fallback
        agents: [InvestigatorAgent]
        fallback_providers: []
`,
  );
  return dir;
}

beforeAll(async () => {
  for (const name of FAKES) fakes[name] = await startFakeProvider();
  server = createLlmServer({
    logger,
    getSecret: (name) => KEYS[name],
    retry: { maxRetries: 1, baseDelayMs: 5, maxDelayMs: 20 },
  });
  const port = await server.listen("127.0.0.1", 0);
  client = createLlmClient({ address: `127.0.0.1:${port}` });
  configDir = writeConfig();
  // One call first, so that loading the provider SDK is not mistaken for a slow first chunk.
  fakes.other.enqueue(answer("warm"));
  for await (const _ of client.generate({
    sessionId: "warm-up",
    executionId: "warm-up",
    agentName: "warm-up",
    messages: [{ role: "user", content: "hi" }],
    tools: [],
    config: {
      provider: "openai",
      model: "gpt-other",
      apiKeyEnv: "PRIMARY_KEY",
      baseUrl: `${fakes.other.url}/v1`,
    },
  })) {
    // drained
  }
});
afterAll(async () => {
  client.close();
  await server.shutdown(500);
  for (const name of FAKES) await fakes[name].close();
  rmSync(configDir, { recursive: true, force: true });
});

let env: Env;
beforeEach(async () => {
  env = await createEnv();
  env.config = loadConfig({ configDir, env: {} }).config;
  for (const name of FAKES) fakes[name].requests.length = 0;
});
afterEach(async () => {
  await env.cleanup();
});

const echo = new StandInGateway({ echo: (a) => `Echo: ${String(a.message)}` });

const answer = (text: string): Responder =>
  respondSse(openAiStream({ text: [text], usage: { prompt: 3, completion: 2 } }));
const unauthorized = respondJson(401, openAiError("invalid_api_key", "Incorrect API key"));
const badRequest = respondJson(400, openAiError("invalid_request_error", "model overloaded"));
const unavailable = respondJson(503, openAiError("server_error", "overloaded"));
/** Headers, then nothing: the first chunk never comes. */
const silent = respondSse([], { hang: true });
/** Half an answer, then silence. */
const stallAfter = (text: string): Responder =>
  respondSse(openAiStream({ text: [text] }).slice(0, 2), { hang: true });
/** Half an answer, then the connection drops. */
const cutAfter =
  (text: string): Responder =>
  async (res, req) => {
    setTimeout(() => res.socket?.destroy(), 100);
    await respondSse(openAiStream({ text: [text] }).slice(0, 2), { hang: true })(res, req);
  };

async function run(options: Parameters<typeof seedExecution>[1] = {}, executionIndex = 0) {
  const metrics = createMetrics("agent-runner", { processMetrics: false });
  const request = await seedExecution(env, options);
  const executionId = request.executions[executionIndex] as string;
  const finished = await runExecution(
    runnerDeps(env, client, echo, { llmRetry: POLICY, metrics }),
    { ...request, execution_id: executionId, agent_index: executionIndex + 1 },
    new AbortController().signal,
  );
  return { request, executionId, finished, metrics };
}

async function fallbackEvents(sessionId: string, executionId?: string) {
  const timeline = await listSessionTimeline(env.db.prisma, sessionId);
  return timeline
    .filter((e) => e.eventType === "provider_fallback")
    .filter((e) => executionId === undefined || e.executionId === executionId)
    .map((e) => e.metadata as Record<string, unknown>);
}

function execution(id: string) {
  return env.db.prisma.agentExecution.findUniqueOrThrow({ where: { id } });
}

async function fallbackCount(metrics: ReturnType<typeof createMetrics<"agent-runner">>) {
  const { values } = await metrics.llmFallbacks.get();
  return values.map((v) => ({ ...v.labels, value: v.value }));
}

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
    const calls = await env.db.prisma.lLMInteraction.findMany({ where: { executionId } });
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
    const rec = record(env.bus, request.session_id);
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
      const messages = await env.db.prisma.message.findMany({
        where: { executionId: request.execution_id, role: "assistant" },
      });
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

describe("fallback lists", () => {
  test("a cascade over two fallbacks; the execution keeps the provider it started with", async () => {
    fakes.primary.enqueue(unauthorized);
    fakes.backup1.enqueue(unauthorized);
    fakes.backup2.enqueue(answer("Second backup answered."));
    const { request, executionId, finished, metrics } = await run();
    expect(finished).toMatchObject({ final_analysis: "Second backup answered." });
    expect(await fallbackEvents(request.session_id)).toMatchObject([
      { original_provider: "primary", fallback_provider: "backup1", attempt: 1 },
      { original_provider: "backup1", fallback_provider: "backup2", attempt: 2 },
    ]);
    expect(await execution(executionId)).toMatchObject({
      llmProvider: "backup2",
      originalLlmProvider: "primary",
    });
    expect(await fallbackCount(metrics)).toHaveLength(2);
  });

  test("the switch is sticky: later calls of the execution stay on the fallback", async () => {
    fakes.primary.enqueue(unauthorized);
    fakes.backup1.enqueue(
      respondSse(
        openAiStream({
          toolCalls: [{ id: "c1", name: "everything__echo", arguments: '{"message":"hi"}' }],
          usage: { prompt: 3, completion: 2 },
        }),
      ),
      answer("Done after the tool."),
    );
    const { finished } = await run();
    expect(finished).toMatchObject({ final_analysis: "Done after the tool." });
    expect(fakes.primary.requests).toHaveLength(1);
    expect(fakes.backup1.requests).toHaveLength(2);
    expect(echo.calls.at(-1)?.name).toBe("everything.echo");
  });

  test("all providers exhausted: the execution fails with the last provider's error", async () => {
    fakes.primary.enqueue(unauthorized);
    fakes.backup1.enqueue(unauthorized);
    fakes.backup2.enqueue(unauthorized);
    const { request, finished } = await run();
    expect(finished.status).toBe("failed");
    expect(finished.error).toContain("HTTP 401");
    expect(await fallbackEvents(request.session_id)).toHaveLength(2);
    expect(fakes.backup2.requests).toHaveLength(1);
  });

  test("`fallback_providers: []` turns fallback off for a stage", async () => {
    fakes.primary.enqueue(unauthorized);
    const { request, finished } = await run({ stageName: "no-fallback" });
    expect(finished.status).toBe("failed");
    expect(await fallbackEvents(request.session_id)).toEqual([]);
    expect(fakes.backup1.requests).toHaveLength(0);
  });

  test("parallel agents: only the one whose provider fails falls back", async () => {
    fakes.primary.enqueue(answer("Agent one on the primary."));
    fakes.other.enqueue(unauthorized);
    fakes.backup1.enqueue(answer("Agent two on the backup."));
    const request = await seedExecution(env, { stageName: "parallel", agents: 2 });
    const deps = runnerDeps(env, client, echo, { llmRetry: POLICY });
    const [one, two] = await Promise.all(
      request.executions.map((id, index) =>
        runExecution(
          deps,
          { ...request, execution_id: id, agent_index: index + 1 },
          new AbortController().signal,
        ),
      ),
    );
    expect(one).toMatchObject({ final_analysis: "Agent one on the primary." });
    expect(two).toMatchObject({ final_analysis: "Agent two on the backup." });
    const [first, second] = request.executions as [string, string];
    expect(await fallbackEvents(request.session_id, first)).toEqual([]);
    expect(await fallbackEvents(request.session_id, second)).toMatchObject([
      { original_provider: "other", fallback_provider: "backup1" },
    ]);
    expect((await execution(first)).originalLlmProvider).toBeNull();
    expect((await execution(second)).originalLlmProvider).toBe("other");
  });

  test("an agent that needs Gemini native tools skips entries that cannot serve them", async () => {
    fakes.primary.enqueue(unauthorized);
    fakes.gemini.enqueue(
      respondSse([
        geminiChunk([{ text: "Searched the web: known issue." }], {
          finishReason: "STOP",
          usage: geminiUsage(5, 4, 0),
        }),
      ]),
    );
    const { request, executionId, finished } = await run({ stageName: "search" });
    expect(finished).toMatchObject({ final_analysis: "Searched the web: known issue." });
    expect(fakes.backup1.requests).toHaveLength(0);
    expect(await fallbackEvents(request.session_id)).toMatchObject([
      {
        fallback_provider: "gemini",
        fallback_backend: "google-native",
        attempt: 2,
        skipped_incompatible: ["backup1"],
      },
    ]);
    // The native tools went with the agent to the Gemini fallback.
    expect(JSON.stringify(fakes.gemini.requests[0]?.body)).toContain("googleSearch");
    expect((await execution(executionId)).backend).toBe("google-native");
  });
});

describe("single-shot kinds", () => {
  test("the executive summary falls back after one provider error", async () => {
    fakes.primary.enqueue(badRequest);
    fakes.backup1.enqueue(answer("Summary from the backup."));
    const { request, finished } = await run({
      kind: "executive_summary",
      context: "The pod was OOMKilled.",
    });
    expect(finished).toMatchObject({
      status: "completed",
      final_analysis: "Summary from the backup.",
    });
    expect(fakes.primary.requests).toHaveLength(1);
    expect(await fallbackEvents(request.session_id)).toMatchObject([
      { trigger: "provider_errors", fallback_provider: "backup1" },
    ]);
  });

  test("synthesis falls back after one cut stream", async () => {
    fakes.primary.enqueue(cutAfter("Half a synthesis"));
    fakes.backup1.enqueue(answer("Synthesis from the backup."));
    const { finished } = await run({
      kind: "synthesis",
      stageName: "parallel",
      context: "Agent one said A. Agent two said B.",
    });
    expect(finished).toMatchObject({ final_analysis: "Synthesis from the backup." });
    expect(fakes.primary.requests).toHaveLength(1);
  });
});
