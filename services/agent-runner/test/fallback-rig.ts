import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "@tarsy/config";
import { getExecution, listSessionTimeline } from "@tarsy/db";
import { createLlmClient, type LlmClient } from "@tarsy/llm-client";
import { createLlmServer, type LlmServer } from "@tarsy/llm-service";
import { createMetrics } from "@tarsy/metrics";
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
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
import { createEnv, type Env, logger, runnerDeps, seedExecution } from "./support.ts";

/**
 * The rig of the provider fallback tests: loopback fakes of the providers' HTTP APIs behind a
 * real llm-service, a config whose providers point at them, and the responders that make a
 * fake fail the way a provider does.
 */

const FAKES = ["primary", "backup1", "backup2", "other", "gemini", "gemini2"] as const;
type FakeName = (typeof FAKES)[number];
export const fakes = {} as Record<FakeName, FakeProvider>;
const KEYS: Record<string, string> = {
  PRIMARY_KEY: "sk-primary-0123456789",
  BACKUP_KEY: "sk-backup-0123456789",
  GEMINI_KEY: "gemini-key-0123456789",
};
let server: LlmServer;
export let client: LlmClient;
let configDir: string;

/** The runner's own first-chunk and stall timeouts are long: the providers' overrides apply. */
export const POLICY: LlmRetryPolicy = {
  budgetMs: 20_000,
  baseDelayMs: 20,
  maxDelayMs: 100,
  firstChunkTimeoutMs: 60_000,
  stallTimeoutMs: 60_000,
};

function writeConfig(): string {
  const dir = mkdtempSync(join(tmpdir(), "runner-fallback-"));
  // The primary and the first backup think at different efforts (a fallback keeps the original).
  const effort: Partial<Record<FakeName, string>> = { primary: "low", backup1: "medium" };
  const openai = (name: FakeName, model: string, key: string) => `  ${name}:
    type: openai
    model: ${model}
    api_key_env: ${key}
    base_url: ${fakes[name].url}/v1
    initial_response_timeout: 1500ms
    stall_timeout: 1500ms
${effort[name] ? `    reasoning_effort: ${effort[name]}\n` : ""}`;
  writeFileSync(
    join(dir, "llm-providers.yaml"),
    `llm_providers:
${openai("primary", "gpt-primary", "PRIMARY_KEY")}${openai("backup1", "gpt-backup-1", "BACKUP_KEY")}${openai("backup2", "gpt-backup-2", "BACKUP_KEY")}${openai("other", "gpt-other", "PRIMARY_KEY")}  gemini:
    type: google
    model: gemini-fake
    api_key_env: GEMINI_KEY
    base_url: ${fakes.gemini.url}
  gemini2:
    type: google
    model: gemini-fake-2
    api_key_env: GEMINI_KEY
    base_url: ${fakes.gemini2.url}
`,
  );
  writeFileSync(
    join(dir, "tarsy.yaml"),
    `fallback_lists:
  summaries:
    - llm_provider: backup2
  revisit:
    - llm_provider: backup1
    - llm_provider: primary
    - llm_provider: backup2
  signed:
    - llm_provider: gemini2
      llm_backend: google-native
defaults:
  llm_provider: primary
  max_iterations: 3
  iteration_timeout: 30s
  fallback_providers:
    - provider: backup1
      backend: langchain
    - provider: backup2
      backend: langchain
  summarization:
    fallback_list: summaries
mcp_servers:
  everything:
    transport: { type: stdio, command: "true" }
    # Results over ~100 tokens are summarized by other, walking summaries on failure.
    summarization: { enabled: true, size_threshold_tokens: 100, llm_provider: other }
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
      - name: revisit
        agents: [InvestigatorAgent]
        fallback_list: revisit
      - name: signed
        agents:
          - name: InvestigatorAgent
            llm_provider: gemini
            llm_backend: google-native
        fallback_list: signed
`,
  );
  return dir;
}

/** The test's database, bus and config (set by `useFallbackRig` before each test). */
export let env: Env;

/** Starts the provider fakes and llm-service for the file, and a fresh database per test. */
export function useFallbackRig(): void {
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

  beforeEach(async () => {
    env = await createEnv();
    env.config = loadConfig({ configDir, env: {} }).config;
    for (const name of FAKES) fakes[name].requests.length = 0;
  });
  afterEach(async () => {
    await env.cleanup();
  });
}

export const echo = new StandInGateway({ echo: (a) => `Echo: ${String(a.message)}` });

export const answer = (text: string): Responder =>
  respondSse(openAiStream({ text: [text], usage: { prompt: 3, completion: 2 } }));
export const unauthorized = respondJson(401, openAiError("invalid_api_key", "Incorrect API key"));
export const badRequest = respondJson(
  400,
  openAiError("invalid_request_error", "model overloaded"),
);
export const unavailable = respondJson(503, openAiError("server_error", "overloaded"));
/** Headers, then nothing: the first chunk never comes. */
export const silent = respondSse([], { hang: true });
/** Half an answer, then silence. */
export const stallAfter = (text: string): Responder =>
  respondSse(openAiStream({ text: [text] }).slice(0, 2), { hang: true });
/** Half an answer, then the connection drops. */
export const cutAfter =
  (text: string): Responder =>
  async (res, req) => {
    setTimeout(() => res.socket?.destroy(), 100);
    await respondSse(openAiStream({ text: [text] }).slice(0, 2), { hang: true })(res, req);
  };

export async function run(options: Parameters<typeof seedExecution>[1] = {}, executionIndex = 0) {
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

export async function fallbackEvents(sessionId: string, executionId?: string) {
  const timeline = await listSessionTimeline(env.db.prisma, sessionId);
  return timeline
    .filter((e) => e.eventType === "provider_fallback")
    .filter((e) => executionId === undefined || e.executionId === executionId)
    .map((e) => e.metadata as Record<string, unknown>);
}

export async function execution(id: string) {
  const row = await getExecution(env.db.prisma, id);
  if (!row) throw new Error(`execution ${id} not found`);
  return row;
}

export async function fallbackCount(metrics: ReturnType<typeof createMetrics<"agent-runner">>) {
  const { values } = await metrics.llmFallbacks.get();
  return values.map((v) => ({ ...v.labels, value: v.value }));
}
