import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import type { Bus } from "@tarsy/bus";
import { loadConfig } from "@tarsy/config";
import type { PayloadOf } from "@tarsy/contracts";
import type { Db } from "@tarsy/db";
import { createMaskingService } from "@tarsy/masking";
import { createMcpGatewayClient } from "@tarsy/mcp-client";
import { createRunbookClient, runbookSettingsFromConfig } from "@tarsy/runbooks";
import { createLogger } from "@tarsy/runtime";
import { createTestBus, createTestDb, type TestBus, type TestDb } from "@tarsy/testkit";
import type { Context } from "hono";
import type { ZodType } from "zod";
import { createAccessControl, socketAddress } from "../src/access.ts";
import { createApp } from "../src/app.ts";
import {
  type AlertmanagerSettings,
  DEFAULT_SETTINGS,
  type IngestResources,
  type IngestSettings,
} from "../src/deps.ts";
import { createHttpServer } from "../src/http-server.ts";
import { CONFIG_ENV, startGatewayProcess } from "./gateway-process.ts";

export const CONFIG_DIR = fileURLToPath(new URL("./fixtures", import.meta.url));
export const FIXTURE_WEBHOOK = fileURLToPath(
  new URL("./fixtures/alertmanager-webhook-v4.json", import.meta.url),
);

export interface Harness {
  url: string;
  testDb: TestDb;
  db: Db;
  nats: TestBus;
  bus: Bus;
  deps: IngestResources;
  /** Messages the orchestrator's consumer received, by kind. */
  received: Received;
  close(): Promise<void>;
}

export interface Received {
  sessionSubmitted: PayloadOf<"sessionSubmitted">[];
  chatSubmitted: PayloadOf<"chatSubmitted">[];
  cancelRequested: PayloadOf<"cancelRequested">[];
}

export interface HarnessOptions {
  settings?: Partial<Omit<IngestSettings, "alertmanager">> & {
    alertmanager?: Partial<AlertmanagerSettings>;
  };
  /** Run the real mcp-gateway process on the test's bus (default false: no gateway). */
  gateway?: boolean;
  /** Wait until the gateway's servers all initialized (default true). */
  gatewayWaitReady?: boolean;
  /** Config directory for ingest-api and the gateway (default test/fixtures). */
  configDir?: string;
  /** Extra variables the config is interpolated with (beside NODE_BIN and EVERYTHING_MCP). */
  configEnv?: Record<string, string>;
  llmHealth?: IngestResources["llmHealth"];
  /** Use this bus instead of a fresh test bus (e.g. one on a NATS server the test kills). */
  bus?: Bus;
  /** The server's request line + headers limit (default 16 KiB, as in production). */
  maxHeaderBytes?: number;
  /** Keeps users' tokens (TARSY_TOKEN_KEY). */
  tokenSeal?: IngestResources["tokenSeal"];
  /**
   * Take the peer address from this request header when present (identity headers "from" an
   * untrusted address without leaving loopback); default: the socket's address.
   */
  peerHeader?: string;
}

/** A config dir with `authorization` on (projects team-a, team-b, team-c). */
export const AUTHZ_CONFIG_DIR = fileURLToPath(new URL("./fixtures/authz", import.meta.url));

export const testLogger = () =>
  createLogger({ service: "ingest-api-test", level: process.env.TEST_LOG_LEVEL ?? "silent" });

/** ingest-api on a real listening server, with its own database and NATS prefix. */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const testDb = await createTestDb();
  const nats = await createTestBus();
  const bus = options.bus ?? nats.bus;
  const configDir = options.configDir ?? CONFIG_DIR;
  const { config } = loadConfig({ configDir, env: { ...CONFIG_ENV, ...options.configEnv } });
  const logger = testLogger();
  const gateway = options.gateway
    ? await startGatewayProcess({ bus, configDir, waitReady: options.gatewayWaitReady ?? true })
    : undefined;
  const deps: IngestResources = {
    prisma: testDb.db.prisma,
    bus,
    config,
    masking: createMaskingService(),
    runbooks: createRunbookClient(runbookSettingsFromConfig(config.system, CONFIG_ENV)),
    ...(gateway ? { gateway: createMcpGatewayClient(bus, { shortTimeoutMs: 2_000 }) } : {}),
    ...(options.llmHealth ? { llmHealth: options.llmHealth } : {}),
    logger,
    settings: {
      ...DEFAULT_SETTINGS,
      ...options.settings,
      alertmanager: { ...DEFAULT_SETTINGS.alertmanager, ...options.settings?.alertmanager },
    },
    access: await createAccessControl(config.authorization, testDb.db.prisma),
    ...(options.tokenSeal ? { tokenSeal: options.tokenSeal } : {}),
    ...(options.peerHeader ? { remoteAddressOf: peerFrom(options.peerHeader) } : {}),
  };
  const received: Received = { sessionSubmitted: [], chatSubmitted: [], cancelRequested: [] };
  const consumer = await nats.bus.consume("orchestrator", {
    sessionSubmitted: async (p) => void received.sessionSubmitted.push(p),
    chatSubmitted: async (p) => void received.chatSubmitted.push(p),
    cancelRequested: async (p) => void received.cancelRequested.push(p),
    deadline: async () => {},
    executionFinished: async () => {},
    scoreRequested: async () => {},
    feedbackSubmitted: async () => {},
  });
  const server = createHttpServer({
    fetch: createApp(deps).fetch,
    logger,
    maxHeaderBytes: options.maxHeaderBytes ?? 16 * 1024,
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    testDb,
    db: testDb.db,
    nats,
    bus,
    deps,
    received,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await gateway?.stop();
      await consumer.stop();
      await nats.cleanup();
      await testDb.cleanup();
    },
  };
}

const peerFrom =
  (header: string) =>
  (c: Context): string | undefined =>
    c.req.header(header) ?? socketAddress(c);

export interface JsonResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
}

export async function request<T = Record<string, unknown>>(
  url: string,
  init: {
    method?: string;
    body?: unknown;
    rawBody?: string;
    headers?: Record<string, string>;
  } = {},
): Promise<JsonResponse<T>> {
  const headers: Record<string, string> = { ...init.headers };
  let body: string | undefined;
  if (init.rawBody !== undefined) body = init.rawBody;
  else if (init.body !== undefined) {
    body = JSON.stringify(init.body);
    headers["content-type"] ??= "application/json";
  }
  const res = await fetch(url, { method: init.method ?? (body ? "POST" : "GET"), headers, body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : {}) as T };
}

/** Waits until `check` returns true (polling), failing after `timeoutMs`. */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 5_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("condition not met in time");
}

export type ErrorBody = { error: { code: string; message: string; details?: unknown } };

/** Asserts a response body satisfies its contract schema (what the dashboard parses with). */
export function conforms(schema: ZodType, body: unknown): void {
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    throw new Error(`response does not match its contract: ${parsed.error.message}`);
  }
}
