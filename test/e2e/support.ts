import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type Stack, type StackOptions, startStack } from "@tarsy/stack";
import { createTestDatabase, natsUrl, type TestDatabase } from "@tarsy/testkit";
import postgres from "postgres";

export const ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));
export const DEMO_CONFIG = resolve(ROOT, "deploy/demo");
/** `@modelcontextprotocol/server-everything` (stdio), as configs name it: `{{.EVERYTHING_MCP}}`. */
export const EVERYTHING_MCP = resolve(
  ROOT,
  "services/mcp-gateway/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
);
/** What a config that runs server-everything reads: `{{.NODE_BIN}}` and `{{.EVERYTHING_MCP}}`. */
export const EVERYTHING_ENV = { NODE_BIN: process.execPath, EVERYTHING_MCP };
export const DEMO_SCRIPT = resolve(ROOT, "deploy/demo/llm-script.yaml");
/** Planted in the demo cluster's Secret; must never come out unmasked. */
export const PLANTED = "hunter2-demo-db-password";
export const PLANTED_B64 = Buffer.from(PLANTED).toString("base64");

export interface E2E {
  stack: Stack;
  database: TestDatabase;
  logs: string[];
  api<T = unknown>(path: string, init?: RequestInit): Promise<{ status: number; body: T }>;
  stop(): Promise<void>;
}

/** The whole system as processes on a database and NATS prefix of this test's own. */
export async function bootSystem(options: Partial<StackOptions> = {}): Promise<E2E> {
  const database = await createTestDatabase();
  const id = randomBytes(4).toString("hex");
  const logs: string[] = [];
  const stack = await startStack({
    root: ROOT,
    configDir: DEMO_CONFIG,
    llmScriptPath: DEMO_SCRIPT,
    databaseUrl: database.url,
    natsUrl: natsUrl(),
    prefix: `e2e${id}`,
    streamSuffix: `_E2E${id.toUpperCase()}`,
    logLevel: "info",
    log: (line) => logs.push(line),
    ...options,
    // A fixed calendar for the prompts: a weekday's context is as long every day (token counts).
    env: { TARSY_REPO_ROOT: ROOT, RUNNER_PROMPT_TIME: "2026-08-12T15:30:00Z", ...options.env },
  });
  return {
    stack,
    database,
    logs,
    async api<T>(path: string, init?: RequestInit) {
      const response = await fetch(`${stack.apiUrl}${path}`, {
        ...init,
        headers: { "content-type": "application/json", ...init?.headers },
      });
      const text = await response.text();
      return { status: response.status, body: (text ? JSON.parse(text) : null) as T };
    },
    async stop() {
      await stack.stop();
      await database.drop();
    },
  };
}

export const DEMO_ALERT = {
  alert_type: "PodCrashLooping",
  data: {
    alertname: "PodCrashLooping",
    namespace: "payments",
    pod: "payments-api-7f9c6d5b8-x2kqz",
    severity: "critical",
  },
};

/** Every text column of every TARSy table, as one string, to search for leaked secrets. */
export async function dumpDatabase(url: string): Promise<string> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const tables = await sql<{ table_name: string }[]>`
      SELECT table_name FROM information_schema.tables
      WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`;
    const parts: string[] = [];
    for (const { table_name } of tables) {
      const rows = await sql.unsafe(`SELECT row_to_json(t)::text AS j FROM "${table_name}" t`);
      for (const row of rows) parts.push(String(row.j));
    }
    return parts.join("\n");
  } finally {
    await sql.end();
  }
}
