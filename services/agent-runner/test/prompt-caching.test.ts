import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "@tarsy/config";
import { getExecution, listLLMInteractions } from "@tarsy/db";
import { createLlmClient, type LlmClient } from "@tarsy/llm-client";
import { createLlmServer, type LlmServer } from "@tarsy/llm-service";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { anthropicStream } from "../../../llm-service/test/fakes/anthropic.ts";
import {
  type FakeProvider,
  type RecordedRequest,
  type Responder,
  respondSse,
  startFakeProvider,
} from "../../../llm-service/test/fakes/http.ts";
import { runExecution } from "../src/execution.ts";
import { StandInGateway } from "./stand-in-gateway.ts";
import { createEnv, type Env, logger, runnerDeps, seedExecution } from "./support.ts";

/**
 * Prompt caching (ADR-0026) and reasoning effort through the runner: a real llm-service talks
 * to a loopback Anthropic fake that reports cache usage as the API does (the tool prefix
 * written on the first call, read on the next); each interaction row stores it, priced at the
 * bundled table's cache rates.
 */

const KEY = "sk-ant-runner-0123456789";
const PREFIX = 3000;
let fake: FakeProvider;
let server: LlmServer;
let client: LlmClient;
let env: Env;
const dirs: string[] = [];

function configDir(system: string): string {
  const dir = mkdtempSync(join(tmpdir(), "runner-prompt-cache-"));
  dirs.push(dir);
  writeFileSync(
    join(dir, "llm-providers.yaml"),
    `llm_providers:
  claude:
    type: anthropic
    model: claude-sonnet-4-5
    api_key_env: CLAUDE_KEY
    base_url: ${fake.url}/v1
    reasoning_effort: high
`,
  );
  writeFileSync(
    join(dir, "tarsy.yaml"),
    `defaults:
  llm_provider: claude
  max_iterations: 3
  fallback_providers: []
mcp_servers:
  everything:
    transport: { type: stdio, command: "true" }
agents:
  InvestigatorAgent:
    mcp_servers: [everything]
agent_chains:
  test-chain:
    alert_types: [test-alert]
    stages:
      - name: analysis
        agents: [InvestigatorAgent]
${system}`,
  );
  return dir;
}

/**
 * The first call asks for the echo tool and writes the prefix to the cache; later calls read
 * it and answer. Usage as the Anthropic API reports it: input_tokens is the uncached part.
 */
const cachingClaude: Responder = async (res, req: RecordedRequest) => {
  const body = req.body as { messages: { content: { type: string }[] | string }[] };
  const answered = body.messages.some(
    (m) => Array.isArray(m.content) && m.content.some((c) => c.type === "tool_result"),
  );
  const spec = answered
    ? {
        text: ["The pod crashes on a bad heap setting."],
        usage: { input: 250, output: 50, cacheRead: PREFIX },
      }
    : {
        toolUses: [{ id: "toolu_1", name: "everything__echo", input: '{"message":"pods"}' }],
        usage: { input: 200, output: 50, cacheCreation: PREFIX },
      };
  await respondSse(anthropicStream(spec))(res, req);
};

beforeAll(async () => {
  fake = await startFakeProvider(cachingClaude);
  server = createLlmServer({
    logger,
    getSecret: (name) => (name === "CLAUDE_KEY" ? KEY : undefined),
    retry: { maxRetries: 1, baseDelayMs: 5, maxDelayMs: 20 },
  });
  const port = await server.listen("127.0.0.1", 0);
  client = createLlmClient({ address: `127.0.0.1:${port}` });
});
afterAll(async () => {
  client.close();
  await server.shutdown(500);
  await fake.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  env = await createEnv();
  fake.requests.length = 0;
});
afterEach(async () => {
  await env.cleanup();
});

async function investigate(system: string) {
  env.config = loadConfig({ configDir: configDir(system), env: {} }).config;
  const request = await seedExecution(env);
  const executionId = request.executions[0] as string;
  const echo = new StandInGateway({ echo: (a) => `Echo: ${String(a.message)}` });
  const finished = await runExecution(
    runnerDeps(env, client, echo),
    { ...request, execution_id: executionId, agent_index: 1 },
    new AbortController().signal,
  );
  expect(finished).toMatchObject({ final_analysis: "The pod crashes on a bad heap setting." });
  const interactions = await listLLMInteractions(env.db.prisma, {
    sessionId: request.session_id,
  });
  return { executionId, interactions };
}

type SentBody = { tools: Record<string, unknown>[]; output_config?: unknown };

describe("prompt caching through the runner", () => {
  test("loop calls mark the last tool; cache reads and writes are stored and priced at cache rates", async () => {
    const { executionId, interactions } = await investigate("");
    expect(fake.requests).toHaveLength(2);
    for (const req of fake.requests) {
      const body = req.body as SentBody;
      expect(body.tools.at(-1)?.cache_control).toEqual({ type: "ephemeral", ttl: "1h" });
      expect(body.output_config).toEqual({ effort: "high" });
    }
    expect(
      interactions.map((i) => ({
        type: i.interactionType,
        input: i.inputTokens,
        read: i.cacheReadTokens,
        write: i.cacheCreationTokens,
        effort: i.reasoningEffort,
        usd: i.estimatedCostUsd,
        source: i.costRateSource,
      })),
    ).toEqual([
      // claude-sonnet-4-5: input 3, 1-hour write 6, read 0.30, output 15 USD per million.
      // 200 × 3 + 3000 × 6 + 50 × 15 = 19,350 µUSD
      {
        type: "iteration",
        input: 200,
        read: 0,
        write: PREFIX,
        effort: "high",
        usd: 0.01935,
        source: expect.stringMatching(/^catalog:/),
      },
      // 250 × 3 + 3000 × 0.30 + 50 × 15 = 2,400 µUSD (the prefix at full price: 9,000 more)
      {
        type: "final_analysis",
        input: 250,
        read: PREFIX,
        write: 0,
        effort: "high",
        usd: 0.0024,
        source: expect.stringMatching(/^catalog:/),
      },
    ]);
    expect(await getExecution(env.db.prisma, executionId)).toMatchObject({
      reasoningEffort: "high",
      originalReasoningEffort: null,
    });
  }, 30_000);

  test("system.prompt_caching.enabled: false sends no breakpoint; reported cache usage is still stored", async () => {
    const { interactions } = await investigate("system:\n  prompt_caching:\n    enabled: false\n");
    expect(fake.requests).toHaveLength(2);
    for (const req of fake.requests) {
      expect(JSON.stringify(req.body)).not.toContain("cache_control");
      expect((req.body as SentBody).output_config).toEqual({ effort: "high" });
    }
    expect(interactions.map((i) => [i.cacheCreationTokens, i.cacheReadTokens])).toEqual([
      [PREFIX, 0],
      [0, PREFIX],
    ]);
  }, 30_000);
});
