/**
 * What resuming an interrupted execution saves against starting it over (#25).
 *
 *   pnpm --filter @tarsy/bench resume [--iterations 10] [--kill-at 7]   (bench/resume.ts)
 *
 * One process runs a loopback OpenAI chat-completions server, llm-service (real gRPC on
 * 127.0.0.1) and the runner's execution code on a fresh Postgres database. The model is
 * stateless and answers from the conversation it is sent: a tool call until the conversation
 * holds `iterations - 1` tool results, then the answer. Each answer takes 150 ms and each tool
 * call 100 ms; tokens are counted as the API would bill them (the request's bytes / 4 as
 * input, the answer's as output). The execution runs three times:
 *
 * - uninterrupted (the baseline);
 * - interrupted while its `kill-at`th LLM call streams, then run again with resuming on;
 * - the same with `queue.resume_interrupted: false` (started over).
 *
 * The interruption is a runner shutdown inside this process: the attempt is abandoned where
 * it stands and its request runs again, as after a redelivery. (The redelivery delay itself,
 * NATS' ack wait after a kill -9, is the same either way and not counted.)
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "@tarsy/config";
import { createLogger } from "@tarsy/runtime";
import { createLlmServer } from "../../llm-service/src/index.ts";
import {
  type RecordedRequest,
  respondSse,
  startFakeProvider,
} from "../../llm-service/test/fakes/http.ts";
import { openAiStream } from "../../llm-service/test/fakes/openai.ts";
import { createLlmClient } from "../../packages/llm-client/src/index.ts";
import { ExecutionAbortedError } from "../../services/agent-runner/src/errors.ts";
import { runExecution } from "../../services/agent-runner/src/execution.ts";
import { createEnv, runnerDeps, seedExecution } from "../../services/agent-runner/test/env.ts";
import { StandInGateway } from "../../services/agent-runner/test/stand-in-gateway.ts";

const ANSWER_MS = 150;
const TOOL_MS = 100;
const tokens = (value: unknown) => Math.ceil(JSON.stringify(value).length / 4);

export interface ResumeRow {
  what: string;
  llmCalls: number;
  toolCalls: number;
  /** Input and output tokens the provider billed (a cut call's input included). */
  tokens: number;
  /** Wall time of the attempt that finished the execution, ms. */
  finishMs: number;
}

type Body = { messages: { role: string }[] };

/** The three runs; `killAt` counts LLM calls from 1. */
export async function runResumeBench(options: {
  iterations: number;
  killAt: number;
}): Promise<ResumeRow[]> {
  const { iterations, killAt } = options;
  let billed = 0;
  /** Called when the fake receives an LLM call: the kill switch of the run in progress. */
  let onRequest: (n: number) => void = () => {};
  let received = 0;
  const fake = await startFakeProvider(async (res, req: RecordedRequest) => {
    received++;
    onRequest(received);
    const body = req.body as Body;
    const results = body.messages.filter((m) => m.role === "tool").length;
    const spec =
      results < iterations - 1
        ? {
            toolCalls: [
              {
                id: `call-${results + 1}`,
                name: "everything__echo",
                arguments: JSON.stringify({ message: `step ${results + 1} `.repeat(40) }),
              },
            ],
          }
        : { text: ["The pod ran out of memory; raise its limit to 1Gi."] };
    const input = tokens(body.messages);
    const output = tokens(spec);
    billed += input;
    const events = openAiStream({ ...spec, usage: { prompt: input, completion: output } });
    // The answer streams over ANSWER_MS; its output is billed once it is complete.
    await respondSse(events, { delayMs: ANSWER_MS / events.length })(res, req);
    if (!res.destroyed) billed += output;
  });
  const dir = mkdtempSync(join(tmpdir(), "bench-resume-"));
  writeFileSync(
    join(dir, "llm-providers.yaml"),
    `llm_providers:
  fake-openai:
    type: openai
    model: gpt-bench
    api_key_env: BENCH_KEY
    base_url: ${fake.url}/v1
`,
  );
  const logger = createLogger({ service: "bench-resume", level: "error" });
  const server = createLlmServer({ logger, getSecret: () => "sk-bench-0123456789" });
  const port = await server.listen("127.0.0.1", 0);
  const client = createLlmClient({ address: `127.0.0.1:${port}` });
  const rows: ResumeRow[] = [];
  try {
    for (const mode of ["uninterrupted", "resumed", "started over"] as const) {
      writeFileSync(
        join(dir, "tarsy.yaml"),
        `queue:
  resume_interrupted: ${mode !== "started over"}
defaults:
  llm_provider: fake-openai
  max_iterations: ${iterations + 2}
  iteration_timeout: 60s
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
`,
      );
      const env = await createEnv();
      env.config = loadConfig({ configDir: dir, env: {} }).config;
      const tools = new StandInGateway({ echo: (a) => `Echo: ${String(a.message)}` });
      tools.delayMs = TOOL_MS;
      const deps = runnerDeps(env, client, tools, { logger });
      try {
        const request = await seedExecution(env);
        billed = 0;
        received = 0;
        if (mode !== "uninterrupted") {
          // The first attempt dies while its kill-at-th call streams.
          const runner = new AbortController();
          onRequest = (n) => {
            if (n === killAt) {
              setTimeout(() => runner.abort(new ExecutionAbortedError("shutdown")), ANSWER_MS / 2);
            }
          };
          await runExecution(deps, request, runner.signal).then(
            () => {
              throw new Error("the first attempt was not interrupted");
            },
            (err: unknown) => {
              if (!(err instanceof ExecutionAbortedError)) throw err;
            },
          );
          onRequest = () => {};
        }
        const started = performance.now();
        const finished = await runExecution(deps, request, new AbortController().signal);
        if (finished.status !== "completed") {
          throw new Error(`${mode}: the execution ended ${finished.status}: ${finished.error}`);
        }
        rows.push({
          what: mode,
          llmCalls: received,
          toolCalls: tools.calls.length,
          tokens: billed,
          finishMs: performance.now() - started,
        });
      } finally {
        await env.cleanup();
      }
    }
  } finally {
    client.close();
    await server.shutdown(500);
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

export function formatResumeRows(rows: ResumeRow[]): string {
  const head = "| run | LLM calls | tool calls | tokens billed | finishing attempt |";
  const lines = rows.map(
    (r) =>
      `| ${r.what} | ${r.llmCalls} | ${r.toolCalls} | ${r.tokens.toLocaleString("en-US")} | ${Math.round(r.finishMs).toLocaleString("en-US")} ms |`,
  );
  return [head, "|---|---|---|---|---|", ...lines].join("\n");
}
