/**
 * The agent-runner tests' environment without vitest (the resume benchmark runs on it too): a
 * database, a bus and a config of their own, llm-service on a script, seeded executions and
 * the runner's dependencies. support.ts adds the vitest fixtures.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Bus } from "@tarsy/bus";
import { loadConfig, type TarsyConfig } from "@tarsy/config";
import {
  type ExecutionFinished,
  type ExecutionKind,
  type ExecutionRequested,
  type PersistentEvent,
  type StreamChunk,
  sessionChunksSubject,
  sessionEventsSubject,
} from "@tarsy/contracts";
import { createCostEstimator } from "@tarsy/cost";
import {
  createSession,
  type Db,
  ensureExecutiveSummaryExecution,
  ensureStage,
  type LLMInteraction,
  listLLMInteractions,
} from "@tarsy/db";
import { createLlmClient, type LlmClient } from "@tarsy/llm-client";
import { createLlmServer, type LlmServer, parseScript } from "@tarsy/llm-service";
import { createMaskingService } from "@tarsy/masking";
import { createMcpGatewayClient } from "@tarsy/mcp-client";
import { createRunbookClient, runbookSettingsFromConfig } from "@tarsy/runbooks";
import { createLogger, type Logger } from "@tarsy/runtime";
import { createTestBus, createTestDb, type TestBus, type TestDb } from "@tarsy/testkit/resources";
import type { RunnerResources } from "../src/execution.ts";
import type { ToolGateway } from "../src/ports.ts";
import { createPostgresStore } from "../src/store.ts";

export const logger: Logger = createLogger({
  service: "agent-runner-test",
  level: process.env.TEST_LOG_LEVEL ?? "silent",
});

export const REPO_ROOT = resolve(fileURLToPath(new URL("../../..", import.meta.url)));
const GATEWAY_MAIN = join(REPO_ROOT, "services/mcp-gateway/src/main.ts");
const TSX_BIN = join(REPO_ROOT, "node_modules/.bin/tsx");
const BLOCKING_SERVER = fileURLToPath(new URL("./servers/blocking-server.ts", import.meta.url));
const RUNNER_MAIN = join(REPO_ROOT, "services/agent-runner/src/main.ts");
export const EVERYTHING_MAIN = createRequire(import.meta.url).resolve(
  "@modelcontextprotocol/server-everything/dist/index.js",
);
/** Lives in the environment of the MCP server; `get-env` returns it, masking must hide it. */
export const PLANTED_SECRET = "ghp_PlantedSecretToken0123456789abcdefXYZ";

/** The MCP server of servers/blocking-server.ts, as a config entry logging to `logFile`. */
function blockingServerYaml(logFile: string): string {
  return `
  blocking:
    transport:
      type: stdio
      command: ${JSON.stringify(TSX_BIN)}
      args: [${JSON.stringify(BLOCKING_SERVER)}]
      env:
        BLOCKING_SERVER_LOG: ${JSON.stringify(logFile)}`;
}

/**
 * A TARSy config dir of its own: scripted LLM, one chain with one tool-using agent. With
 * `blockingServerLog`, the agent also has the `blocking` server (servers/blocking-server.ts).
 */
export function writeConfig(
  options: {
    iterationTimeout?: string;
    maxIterations?: number;
    blockingServerLog?: string;
    /** Adds the `sandbox` server (a session server at this base URL) to the agent. */
    sandboxBase?: string;
    /** `skills/<name>/SKILL.md` files of the config dir (name → file text). */
    skills?: Record<string, string>;
    /** YAML lines added to InvestigatorAgent's definition (e.g. `required_skills: [x]`). */
    agentYaml?: string;
  } = {},
): {
  config: TarsyConfig;
  dir: string;
} {
  const blocking = options.blockingServerLog;
  const sandbox = options.sandboxBase;
  const sandboxYaml = sandbox
    ? `
  sandbox:
    transport:
      type: http
      url: "${sandbox}/mcp"
      custom_headers:
        X-Session-ID: "{{.SESSION_ID}}"
      session_cleanup_url: "${sandbox}/sessions/{{.SESSION_ID}}"`
    : "";
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
      command: ${JSON.stringify(process.execPath)}
      args: [${JSON.stringify(EVERYTHING_MAIN)}, "stdio"]
      env:
        PLANTED_GITHUB_TOKEN: "${PLANTED_SECRET}"
    instructions: "EVERYTHING-INSTRUCTIONS: echo repeats its input."
    data_masking:
      enabled: true
      pattern_groups: [security]
    summarization:
      enabled: true
      size_threshold_tokens: 200
      summary_max_token_limit: 100${blocking ? blockingServerYaml(blocking) : ""}${sandboxYaml}
agents:
  InvestigatorAgent:
    mcp_servers: [everything${blocking ? ", blocking" : ""}${sandbox ? ", sandbox" : ""}]
    custom_instructions: "CUSTOM-INSTRUCTIONS: be brief."${options.agentYaml ? `\n    ${options.agentYaml.trim().split("\n").join("\n    ")}` : ""}
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
  for (const [name, text] of Object.entries(options.skills ?? {})) {
    mkdirSync(join(dir, "skills", name), { recursive: true });
    writeFileSync(join(dir, "skills", name, "SKILL.md"), text);
  }
  const { config } = loadConfig({ configDir: dir, env: {} });
  return { config, dir };
}

/** llm-service (real gRPC server, scripted backend) on a free port, and a client of it. */
export async function startLlm(
  script: unknown,
  log: Logger = logger,
): Promise<{
  client: LlmClient;
  server: LlmServer;
  address: string;
  stop(): Promise<void>;
}> {
  const server = createLlmServer({
    logger: log,
    getSecret: () => undefined,
    script: parseScript(JSON.stringify(script), "test script"),
  });
  const port = await server.listen("127.0.0.1", 0);
  const address = `127.0.0.1:${port}`;
  const client = createLlmClient({ address });
  return {
    client,
    server,
    address,
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

/**
 * Everything published for a session: persistent events as sent (a plain subscription, so a
 * repeated publish the stream drops would show), and transient chunks.
 */
export async function record(
  env: Pick<Env, "bus" | "testBus">,
  sessionId: string,
): Promise<Recorded> {
  const { bus } = env;
  const events: PersistentEvent[] = [];
  const chunks: StreamChunk[] = [];
  const raw = await env.testBus.raw();
  const sub = raw.subscribe(bus.subject(sessionEventsSubject(sessionId)), {
    callback: (_err, msg) => {
      if (msg) events.push(msg.json() as PersistentEvent);
    },
  });
  const chunkSub = bus.subscribeTransient("streamChunk", sessionChunksSubject(sessionId), (c) => {
    chunks.push(c);
  });
  await Promise.all([raw.flush(), bus.flush()]);
  return {
    events,
    chunks,
    stop() {
      sub.unsubscribe();
      chunkSub.unsubscribe();
    },
  };
}

/**
 * Publishes a marker chunk for the session on `bus` and waits until `rec` has it. A subscriber
 * gets the messages of one connection in the order they were sent, so once the marker is in,
 * so is every chunk sent on that connection before it. Returns the marker's index in `rec.chunks`.
 */
export async function chunkMarker(bus: Bus, rec: Recorded, sessionId: string): Promise<number> {
  const eventId = `marker-${randomUUID()}`;
  bus.publishTransient("streamChunk", {
    v: 1,
    type: "stream.chunk",
    session_id: sessionId,
    stage_id: null,
    execution_id: "marker",
    event_id: eventId,
    delta: "",
    timestamp: new Date().toISOString(),
  });
  return waitFor("the marker chunk", () => {
    const index = rec.chunks.findIndex((c) => c.event_id === eventId);
    return index >= 0 ? index : undefined;
  });
}

/** A logger whose lines (parsed) the test can read. */
export function captureLogger(level = "info"): { logger: Logger; lines: { msg?: string }[] } {
  const lines: { msg?: string }[] = [];
  const captured = createLogger({
    service: "test",
    level,
    destination: { write: (line: string) => void lines.push(JSON.parse(line)) },
  });
  return { logger: captured, lines };
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

export async function createEnv(
  options: Parameters<typeof writeConfig>[0] & { runnerAckWaitMs?: number } = {},
): Promise<Env> {
  const [testDb, testBus] = await Promise.all([
    createTestDb(),
    createTestBus(
      options.runnerAckWaitMs
        ? { consumers: { runner: { ackWaitMs: options.runnerAckWaitMs } } }
        : {},
    ),
  ]);
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

/** What `createEnv` takes: the config's iteration settings, the runner consumer's ack wait. */
export type EnvOptions = NonNullable<Parameters<typeof createEnv>[0]>;

/** Something a test started, to stop when it ends. */
export type Stop = () => Promise<unknown> | unknown;

export function runnerDeps(
  env: Env,
  llm: LlmClient,
  tools: ToolGateway,
  overrides: Partial<RunnerResources & { bus: Bus }> = {},
): RunnerResources & { bus: Bus } {
  return {
    config: env.config,
    store: createPostgresStore(env.db, createCostEstimator(env.config.system.cost_estimation)),
    bus: env.bus,
    llm,
    tools,
    runbooks: createRunbookClient(runbookSettingsFromConfig(env.config.system, {})),
    masking: createMaskingService(),
    logger,
    runnerId: "runner-test",
    ...overrides,
  };
}

/** A session with one stage and one pending execution, and the request for it. */
/** The session's first LLM interaction of `type` (any type when omitted); throws when there is none. */
export async function firstLLMInteraction(
  env: Env,
  sessionId: string,
  type?: LLMInteraction["interactionType"],
): Promise<LLMInteraction> {
  const rows = await listLLMInteractions(env.db.prisma, { sessionId });
  const row = rows.find((r) => type === undefined || r.interactionType === type);
  if (!row) throw new Error(`no ${type ?? ""} LLM interaction in session ${sessionId}`);
  return row;
}

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
    deadlineReason?: string;
    runbookUrl?: string;
    /** A further stage of this session (a chat turn after the investigation), at `stageIndex`. */
    session?: { id: string; stageIndex: number };
  } = {},
): Promise<ExecutionRequested & { executions: string[] }> {
  const kind = options.kind ?? "investigation";
  const session = options.session
    ? { id: options.session.id }
    : (
        await createSession(env.db.prisma, {
          project: "default",
          alertData: options.alertData ?? '{"alert":"PodCrashLooping","pod":"web-1"}',
          alertType: "test-alert",
          chainId: "test-chain",
          runbookUrl: options.runbookUrl ?? null,
        })
      ).session;
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
      stageIndex: options.session?.stageIndex ?? 1,
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
    ...(options.deadlineReason && { deadline_reason: options.deadlineReason }),
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

export interface ServiceProcess {
  child: ChildProcess;
  output: string[];
  /** SIGKILL: the process dies at once, without any cleanup. */
  kill(): void;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<number | null>;
}

function startProcess(main: string, extraEnv: Record<string, string>): ServiceProcess {
  const output: string[] = [];
  const child = spawn(process.execPath, ["--import", "tsx", main], {
    cwd: REPO_ROOT,
    // METRICS_PORT 0: test processes never fight over the ops server's default port.
    env: { ...process.env, LOG_LEVEL: "info", METRICS_PORT: "0", ...extraEnv },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.on("data", (d: Buffer) => output.push(d.toString()));
  child.stderr?.on("data", (d: Buffer) => output.push(d.toString()));
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  return {
    child,
    output,
    kill: () => {
      child.kill("SIGKILL");
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill("SIGTERM");
      return exited;
    },
  };
}

function natsEnv(env: Env): Record<string, string> {
  return {
    NATS_URL: env.testBus.url,
    TARSY_SUBJECT_PREFIX: env.testBus.prefix,
    TARSY_STREAM_SUFFIX: env.testBus.streamSuffix,
    TARSY_CONFIG_DIR: env.configDir,
  };
}

/** The real mcp-gateway as a process of its own, on the test's subjects; waits until ready. */
export async function startGatewayProcess(env: Env): Promise<ServiceProcess> {
  const gateway = startProcess(GATEWAY_MAIN, natsEnv(env));
  const client = createMcpGatewayClient(env.bus, { shortTimeoutMs: 1_000 });
  let last = "";
  await waitFor(
    "mcp-gateway ready",
    async () => {
      if (gateway.child.exitCode !== null) {
        throw new Error(`mcp-gateway exited: ${gateway.output.join("")}`);
      }
      try {
        // Built-in servers (kubernetes-server) may not start here; ours must.
        const health = await client.health();
        last = health.not_ready_reason ?? "";
        return health.servers.find((s) => s.server === "everything")?.initialized || undefined;
      } catch (err) {
        last = String(err);
        return undefined;
      }
    },
    60_000,
  ).catch((err: Error) => {
    gateway.kill();
    throw new Error(`${err.message} (${last}): ${gateway.output.join("").slice(-3000)}`);
  });
  return gateway;
}

/** The real agent runner as a process of its own. */
export function startRunnerProcess(
  env: Env,
  llmAddress: string,
  extra: Record<string, string> = {},
): ServiceProcess {
  return startProcess(RUNNER_MAIN, {
    ...natsEnv(env),
    DATABASE_URL: env.testDb.database.url,
    LLM_SERVICE_ADDRESS: llmAddress,
    ...extra,
  });
}

/** Collects what the runner tells the orchestrator (`executionFinished` on the work stream). */
export async function collectFinished(bus: Bus): Promise<{
  list: ExecutionFinished[];
  stop(): Promise<void>;
}> {
  const list: ExecutionFinished[] = [];
  const ignore = async () => {};
  const consumer = await bus.consume("orchestrator", {
    sessionSubmitted: ignore,
    chatSubmitted: ignore,
    cancelRequested: ignore,
    deadline: ignore,
    scoreRequested: ignore,
    feedbackSubmitted: ignore,
    executionFinished: async (payload) => {
      list.push(payload);
    },
  });
  return {
    list,
    async stop() {
      await consumer.stop();
    },
  };
}
