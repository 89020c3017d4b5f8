import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Bus } from "@tarsy/bus";
import { loadConfig, type TarsyConfig } from "@tarsy/config";
import type {
  ExecutionKind,
  ExecutionRequested,
  PersistentEvent,
  StreamChunk,
} from "@tarsy/contracts";
import { createSession, type Db, ensureExecutiveSummaryExecution, ensureStage } from "@tarsy/db";
import { createLlmClient, type LlmClient } from "@tarsy/llm-client";
import { createLlmServer, type LlmServer, parseScript } from "@tarsy/llm-service";
import { createLogger, type Logger } from "@tarsy/runtime";
import { createTestBus, createTestDb, type TestBus, type TestDb } from "@tarsy/testkit";
import type { RunnerDeps } from "../src/execution.ts";
import type { ToolGateway } from "../src/ports.ts";
import { createPostgresStore } from "../src/store.ts";

export const logger: Logger = createLogger({
  service: "agent-runner-test",
  level: process.env.TEST_LOG_LEVEL ?? "silent",
});

/** A TARSy config dir of its own: scripted LLM, one chain with one tool-using agent. */
export function writeConfig(options: { iterationTimeout?: string; maxIterations?: number } = {}): {
  config: TarsyConfig;
  dir: string;
} {
  const dir = mkdtempSync(join(tmpdir(), "runner-config-"));
  writeFileSync(
    join(dir, "llm-providers.yaml"),
    `llm_providers:
  scripted-llm:
    type: scripted
    model: scripted-model
    max_tool_result_tokens: 100000
`,
  );
  writeFileSync(
    join(dir, "tarsy.yaml"),
    `defaults:
  llm_provider: scripted-llm
  max_iterations: ${options.maxIterations ?? 5}
  iteration_timeout: ${options.iterationTimeout ?? "10s"}
  runbook: "RUNBOOK: check the pods first."
mcp_servers:
  everything:
    transport:
      type: stdio
      command: node
      args: ["everything.js"]
    instructions: "EVERYTHING-INSTRUCTIONS: echo repeats its input."
    summarization:
      enabled: true
      size_threshold_tokens: 200
      summary_max_token_limit: 100
agents:
  InvestigatorAgent:
    mcp_servers: [everything]
    custom_instructions: "CUSTOM-INSTRUCTIONS: be brief."
agent_chains:
  test-chain:
    alert_types: [test-alert]
    stages:
      - name: analysis
        agents:
          - name: InvestigatorAgent
      - name: parallel
        agents:
          - name: InvestigatorAgent
          - name: InvestigatorAgent
`,
  );
  const { config } = loadConfig({ configDir: dir, env: {} });
  return { config, dir };
}

/** llm-service (real gRPC server, scripted backend) on a free port, and a client of it. */
export async function startLlm(script: unknown): Promise<{
  client: LlmClient;
  server: LlmServer;
  stop(): Promise<void>;
}> {
  const server = createLlmServer({
    logger,
    getSecret: () => undefined,
    script: parseScript(JSON.stringify(script), "test script"),
  });
  const port = await server.listen("127.0.0.1", 0);
  const client = createLlmClient({ address: `127.0.0.1:${port}` });
  return {
    client,
    server,
    async stop() {
      client.close();
      await server.shutdown(500);
    },
  };
}

export interface Recorded {
  events: PersistentEvent[];
  chunks: StreamChunk[];
  stop(): void;
}

/** Everything published for a session: persistent events and transient chunks, as sent. */
export function record(bus: Bus, sessionId: string): Recorded {
  const events: PersistentEvent[] = [];
  const chunks: StreamChunk[] = [];
  const sub = bus.connection.subscribe(bus.subject(`events.session.${sessionId}`), {
    callback: (_err, msg) => {
      if (msg) events.push(msg.json() as PersistentEvent);
    },
  });
  const chunkSub = bus.subscribeTransient("streamChunk", `chunks.session.${sessionId}`, (c) => {
    chunks.push(c);
  });
  return {
    events,
    chunks,
    stop() {
      sub.unsubscribe();
      chunkSub.unsubscribe();
    },
  };
}

export interface Env {
  testDb: TestDb;
  testBus: TestBus;
  db: Db;
  bus: Bus;
  config: TarsyConfig;
  configDir: string;
  cleanup(): Promise<void>;
}

export async function createEnv(options: Parameters<typeof writeConfig>[0] = {}): Promise<Env> {
  const [testDb, testBus] = await Promise.all([createTestDb(), createTestBus()]);
  const { config, dir } = writeConfig(options);
  return {
    testDb,
    testBus,
    db: testDb.db,
    bus: testBus.bus,
    config,
    configDir: dir,
    async cleanup() {
      await Promise.allSettled([testDb.cleanup(), testBus.cleanup()]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function runnerDeps(
  env: Env,
  llm: LlmClient,
  tools: ToolGateway,
  overrides: Partial<RunnerDeps> = {},
): RunnerDeps {
  return {
    config: env.config,
    store: createPostgresStore(env.db),
    bus: env.bus,
    llm,
    tools,
    logger,
    runnerId: "runner-test",
    ...overrides,
  };
}

/** A session with one stage and one pending execution, and the request for it. */
export async function seedExecution(
  env: Env,
  options: {
    kind?: ExecutionKind;
    alertData?: string;
    stageName?: string;
    agents?: number;
    context?: string;
    question?: string;
    deadlineAt?: Date;
  } = {},
): Promise<ExecutionRequested & { executions: string[] }> {
  const kind = options.kind ?? "investigation";
  const { session } = await createSession(env.db.prisma, {
    alertData: options.alertData ?? '{"alert":"PodCrashLooping","pod":"web-1"}',
    alertType: "test-alert",
    chainId: "test-chain",
  });
  const now = new Date().toISOString();
  if (kind === "executive_summary") {
    const { execution } = await ensureExecutiveSummaryExecution(env.db.prisma, session.id, {
      agentName: "ExecSummaryAgent",
    });
    return {
      v: 1,
      session_id: session.id,
      stage_id: null,
      execution_id: execution.id,
      kind,
      agent_name: execution.agentName,
      agent_index: 1,
      ...(options.context !== undefined && { context: options.context }),
      requested_at: now,
      executions: [execution.id],
    };
  }
  const agents = options.agents ?? 1;
  const { stage, executions } = await ensureStage(
    env.db.prisma,
    {
      sessionId: session.id,
      stageName: options.stageName ?? "analysis",
      stageIndex: 1,
      kind: kind === "chat" ? "chat" : kind === "synthesis" ? "synthesis" : "investigation",
    },
    Array.from({ length: agents }, (_, i) => ({
      agentName: kind === "synthesis" ? "SynthesisAgent" : "InvestigatorAgent",
      agentIndex: i + 1,
      kind,
    })),
  );
  const first = executions[0];
  if (!first) throw new Error("no execution created");
  return {
    v: 1,
    session_id: session.id,
    stage_id: stage.id,
    execution_id: first.id,
    kind,
    agent_name: first.agentName,
    agent_index: 1,
    ...(options.context !== undefined && { context: options.context }),
    ...(kind === "chat" && {
      chat: { chat_id: session.id, message_id: session.id, question: options.question ?? "?" },
    }),
    ...(options.deadlineAt && { deadline_at: options.deadlineAt.toISOString() }),
    requested_at: now,
    executions: executions.map((e) => e.id),
  };
}

export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 10_000,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
