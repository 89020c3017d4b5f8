/**
 * What provider prompt caching (ADR-0026) saves on a scripted 10-iteration investigation.
 *
 *   pnpm --filter @tarsy/bench prompt-caching [--iterations 10] [--tools 25]
 *
 * One process runs a loopback Anthropic Messages server, llm-service (real gRPC on 127.0.0.1)
 * and the client, which drives the investigation loop as the runner does: the same tools and
 * system prompt every turn, the conversation growing by one tool call and its result. The
 * fake accounts like the real API: tokens are estimated from the request's bytes (4 characters
 * a token); a `cache_control` breakpoint makes the prefix up to it (the tool schemas) a cache
 * entry, written (1-hour write) the first time its exact bytes are seen and read after that.
 * The run is made twice, with `prompt_cache` on (what the runner sends for loop calls while
 * `system.prompt_caching.enabled`) and off, and priced with the bundled price table
 * (claude-sonnet-4-5) exactly as interactions are.
 */
import { createHash } from "node:crypto";
import { parseArgs } from "node:util";
import { createLogger } from "@tarsy/runtime";
import { createLlmServer } from "../llm-service/src/index.ts";
import { anthropicStream } from "../llm-service/test/fakes/anthropic.ts";
import { respondSse, startFakeProvider } from "../llm-service/test/fakes/http.ts";
import { createCostEstimator } from "../packages/cost/src/index.ts";
import {
  type ConversationMessage,
  createLlmClient,
  type GenerateInput,
} from "../packages/llm-client/src/index.ts";

const { values } = parseArgs({
  options: {
    iterations: { type: "string", default: "10" },
    tools: { type: "string", default: "25" },
  },
});
const ITERATIONS = Number(values.iterations);
const TOOLS = Number(values.tools);
const MODEL = "claude-sonnet-4-5";
const tokens = (value: unknown) => Math.ceil(JSON.stringify(value).length / 4);

type Body = {
  tools?: Record<string, unknown>[];
  system?: unknown;
  messages: unknown[];
};

/** Prefixes the fake has cached (by the hash of their bytes). */
const cached = new Set<string>();

const fake = await startFakeProvider(async (res, req) => {
  const body = req.body as Body;
  const tools = body.tools ?? [];
  const marked = tools.findIndex((t) => t.cache_control !== undefined);
  const prefix = marked >= 0 ? tools.slice(0, marked + 1) : [];
  const prefixTokens = prefix.length > 0 ? tokens(prefix) : 0;
  const whole = tokens(tools) + tokens(body.system ?? "") + tokens(body.messages);
  let cacheRead = 0;
  let cacheCreation = 0;
  if (prefix.length > 0) {
    const key = createHash("sha256").update(JSON.stringify(prefix)).digest("hex");
    if (cached.has(key)) cacheRead = prefixTokens;
    else {
      cached.add(key);
      cacheCreation = prefixTokens;
    }
  }
  const turn = body.messages.length;
  const usage = { input: whole - cacheRead - cacheCreation, output: 120, cacheRead, cacheCreation };
  const spec =
    turn >= 2 * ITERATIONS - 1
      ? { text: ["The payments API crashes: its heap exceeds the 2Gi limit."], usage }
      : {
          toolUses: [
            {
              id: `toolu_${turn}`,
              name: "k8s__tool_0",
              input: `{"namespace":"payments","n":${turn}}`,
            },
          ],
          usage,
        };
  await respondSse(anthropicStream(spec))(res, req);
});

const server = createLlmServer({
  logger: createLogger({ service: "bench", level: "silent" }),
  getSecret: (name) => (name === "BENCH_CLAUDE_KEY" ? "sk-ant-bench-0123456789" : undefined),
});
const port = await server.listen("127.0.0.1", 0);
const client = createLlmClient({ address: `127.0.0.1:${port}` });

/** MCP-like tools: a description and a schema of a few properties each. */
const tools = Array.from({ length: TOOLS }, (_, i) => ({
  name: `k8s.tool_${i}`,
  description: `Kubernetes read-only operation number ${i}: lists or describes resources of a namespace, with label and field selectors, paging and output formatting options.`,
  parameters: {
    type: "object",
    properties: {
      namespace: { type: "string", description: "The namespace; all namespaces when empty." },
      name: { type: "string", description: "A resource name; every resource when empty." },
      label_selector: { type: "string", description: "A Kubernetes label selector." },
      field_selector: { type: "string", description: "A Kubernetes field selector." },
      limit: { type: "integer", description: "At most this many items." },
    },
  },
}));
const system = `You are TARSy, an SRE agent. ${"Investigate the alert with the tools; explain the root cause and the fix. ".repeat(20)}`;
const toolResult = (n: number) =>
  `NAME                             READY   STATUS             RESTARTS ${n}\n${"payments-api-7f9c6d5b8-x2kqz  0/1     CrashLoopBackOff   14\n".repeat(12)}`;

async function investigation(promptCache: boolean) {
  cached.clear();
  const estimator = createCostEstimator({ enabled: true, model_rates: {}, promotions: [] });
  const messages: ConversationMessage[] = [
    { role: "system", content: system },
    { role: "user", content: "Alert PodCrashLooping: payments-api-7f9c6d5b8-x2kqz in payments." },
  ];
  const sum = { input: 0, cacheRead: 0, cacheCreation: 0, output: 0, usd: 0 };
  for (let iteration = 1; iteration <= ITERATIONS; iteration++) {
    const input: GenerateInput = {
      sessionId: "bench",
      executionId: `bench-${promptCache}`,
      agentName: "BenchAgent",
      messages,
      tools,
      config: {
        provider: "anthropic",
        model: MODEL,
        apiKeyEnv: "BENCH_CLAUDE_KEY",
        baseUrl: `${fake.url}/v1`,
      },
      promptCache,
    };
    let call: { id: string; name: string; arguments: string } | undefined;
    for await (const chunk of client.generate(input)) {
      if (chunk.type === "tool_call") {
        call = { id: chunk.callId, name: chunk.name, arguments: chunk.arguments };
      }
      if (chunk.type === "usage") {
        sum.input += chunk.inputTokens;
        sum.cacheRead += chunk.cacheReadTokens;
        sum.cacheCreation += chunk.cacheCreationTokens;
        sum.output += chunk.outputTokens;
        const cost = estimator.estimate(
          MODEL,
          {
            input_tokens: chunk.inputTokens,
            output_tokens: chunk.outputTokens,
            total_tokens: chunk.totalTokens,
            cache_read_tokens: chunk.cacheReadTokens,
            cache_creation_tokens: chunk.cacheCreationTokens,
          },
          Date.now(),
        );
        sum.usd += cost.estimatedCostUsd ?? 0;
      }
    }
    if (!call) break;
    messages.push({ role: "assistant", content: "", toolCalls: [call] });
    messages.push({
      role: "tool",
      content: toolResult(iteration),
      toolCallId: call.id,
      toolName: call.name,
    });
  }
  return sum;
}

const on = await investigation(true);
const off = await investigation(false);
const row = (label: string, s: typeof on) =>
  `${label.padEnd(12)} ${String(s.input).padStart(9)} ${String(s.cacheRead).padStart(11)} ${String(s.cacheCreation).padStart(12)} ${String(s.input + s.cacheRead + s.cacheCreation).padStart(12)} ${`$${s.usd.toFixed(6)}`.padStart(11)}`;
console.log(
  `${ITERATIONS}-iteration investigation, ${TOOLS} tools, ${MODEL} (bundled price table), loopback Anthropic fake`,
);
console.log(
  `${"caching".padEnd(12)} ${"uncached".padStart(9)} ${"cache read".padStart(11)} ${"cache write".padStart(12)} ${"prompt total".padStart(12)} ${"est. cost".padStart(11)}`,
);
console.log(row("on", on));
console.log(row("off", off));
console.log(
  `billed input at the full rate: ${on.input} vs ${off.input} tokens (${Math.round((1 - on.input / off.input) * 100)}% fewer); estimated cost ${Math.round((1 - on.usd / off.usd) * 100)}% lower`,
);
client.close();
await server.shutdown(500);
await fake.close();
