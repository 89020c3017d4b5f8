/**
 * The session list with its aggregates (interaction counts, token sums, stage counts, chat
 * messages: one SQL statement per page) over 1,000 stored sessions, beside raw baselines
 * measured in the same run on the same database: the same page as a plain
 * `SELECT … ORDER BY created_at DESC LIMIT n` without aggregates, and the aggregate statement
 * alone (`getSessionStats` of the page's ids).
 *
 * A fresh database of its own is seeded in SQL: per session 3 stages (one a parallel stage of
 * two agents), 4 executions, 12 LLM interactions (1 KB of response each), 8 MCP interactions,
 * and every second one a chat of two questions. ingest-api runs as its own process
 * (`@tarsy/stack`, nothing else started) and is asked over HTTP, one request at a time.
 *
 * Run: `pnpm --filter @tarsy/bench session-list` (`--sessions N`, `--requests N`)
 */
import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { connectBus, createBusAdmin } from "@tarsy/bus";
import { createDb, getSessionStats } from "@tarsy/db";
import { createLogger } from "@tarsy/runtime";
import { startStack } from "@tarsy/stack";
import postgres from "postgres";

const ROOT = resolve(fileURLToPath(new URL("..", import.meta.url)));
const ADMIN_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const PAGE_SIZES = [25, 100, 200, 1000];
const { values: args } = parseArgs({
  options: {
    sessions: { type: "string", default: "1000" },
    requests: { type: "string", default: "200" },
  },
});
const SESSIONS = Number(args.sessions);
const REQUESTS = Number(args.requests);
const silent = createLogger({ service: "bench", level: "silent" });

async function seed(sql: postgres.Sql, sessions: number): Promise<void> {
  const text = "x".repeat(1_000);
  await sql.begin(async (tx) => {
    await tx`
      INSERT INTO alert_sessions (alert_data, alert_type, chain_id, status, created_at,
                                  started_at, completed_at, final_analysis)
      SELECT '{"alertname":"PodCrashLooping"}', 'PodCrashLooping', 'pipeline', 'completed',
             now() - make_interval(secs => i), now() - make_interval(secs => i),
             now() - make_interval(secs => i) + interval '42 seconds', 'done'
      FROM generate_series(1, ${sessions}::int) AS i`;
    await tx`
      INSERT INTO stages (session_id, stage_name, stage_index, kind, status, parallel_type,
                          expected_agent_count)
      SELECT s.id, n.name, n.idx, n.kind::stage_kind, 'completed',
             n.parallel::parallel_type, n.agents
      FROM alert_sessions s
      CROSS JOIN (VALUES ('triage', 1, 'investigation', NULL, 1),
                         ('deep-dive', 2, 'investigation', 'multi_agent', 2),
                         ('deep-dive - Synthesis', 3, 'synthesis', NULL, 1))
        AS n(name, idx, kind, parallel, agents)`;
    await tx`
      INSERT INTO agent_executions (stage_id, session_id, agent_name, agent_index, status,
                                    input_tokens, output_tokens, total_tokens)
      SELECT st.id, st.session_id, 'Agent' || a, a, 'completed', 3000, 100, 3100
      FROM stages st CROSS JOIN generate_series(1, 2) AS a
      WHERE a <= st.expected_agent_count`;
    await tx`
      INSERT INTO llm_interactions (session_id, stage_id, execution_id, interaction_type,
                                    model_name, iteration, input_tokens, output_tokens,
                                    total_tokens, response_text)
      SELECT e.session_id, e.stage_id, e.id, 'iteration', 'gemini-2.5-pro', i, 1000, 33, 1033,
             ${text}
      FROM agent_executions e CROSS JOIN generate_series(1, 3) AS i`;
    await tx`
      INSERT INTO mcp_interactions (session_id, stage_id, execution_id, interaction_type,
                                    server_name, tool_name)
      SELECT e.session_id, e.stage_id, e.id, 'tool_call', 'kubernetes-server', 'pods_list'
      FROM agent_executions e CROSS JOIN generate_series(1, 2) AS i`;
    await tx`
      INSERT INTO chats (session_id, created_by)
      SELECT id, 'alice' FROM (SELECT id, row_number() OVER () AS n FROM alert_sessions) s
      WHERE n % 2 = 0`;
    await tx`
      INSERT INTO chat_user_messages (chat_id, content, author)
      SELECT c.id, 'why?', 'alice' FROM chats c CROSS JOIN generate_series(1, 2)`;
  });
  await sql`ANALYZE`;
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;

async function time(
  runs: number,
  fn: () => Promise<unknown>,
): Promise<{ p50: number; p95: number }> {
  for (let i = 0; i < Math.min(20, runs); i++) await fn(); // warm-up
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await fn();
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  return { p50: quantile(samples, 0.5), p95: quantile(samples, 0.95) };
}

const ms = (v: number) => `${v.toFixed(2)} ms`;

async function main() {
  const id = randomBytes(4).toString("hex");
  const dbName = `tarsy_bench_list_${id}`;
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  const databaseUrl = new URL(ADMIN_URL);
  databaseUrl.pathname = `/${dbName}`;
  const prefix = `benchlist${id}`;
  const streamSuffix = `_BENCHLIST${id.toUpperCase()}`;
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    await admin.unsafe(`CREATE DATABASE ${dbName}`);
    cleanups.push(() => admin.unsafe(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`));
    // ingest-api alone: it migrates the database at start (the stack does) and serves the API.
    const stack = await startStack({
      root: ROOT,
      configDir: resolve(ROOT, "deploy/demo"),
      databaseUrl: databaseUrl.toString(),
      ...(process.env.NATS_URL && { natsUrl: process.env.NATS_URL }),
      prefix,
      streamSuffix,
      replicas: {
        "llm-service": 0,
        "mcp-gateway": 0,
        orchestrator: 0,
        "agent-runner": 0,
        "stream-relay": 0,
      },
      logLevel: "info",
      log: () => {},
    });
    cleanups.push(async () => {
      const owner = await connectBus({
        servers: stack.natsUrl,
        name: "bench-session-list-cleanup",
        logger: silent,
        prefix,
        streamSuffix,
      });
      await createBusAdmin(owner)
        .deprovision()
        .finally(() => owner.close());
    });
    cleanups.push(() => stack.stop());

    const sql = postgres(databaseUrl.toString(), { max: 1, onnotice: () => {} });
    cleanups.push(() => sql.end());
    const seedStarted = performance.now();
    await seed(sql, SESSIONS);
    const [counts] = await sql<{ s: number; st: number; e: number; l: number; m: number }[]>`
      SELECT (SELECT count(*) FROM alert_sessions)::int AS s, (SELECT count(*) FROM stages)::int AS st,
             (SELECT count(*) FROM agent_executions)::int AS e,
             (SELECT count(*) FROM llm_interactions)::int AS l,
             (SELECT count(*) FROM mcp_interactions)::int AS m`;
    console.log(
      `node ${process.version}; seeded in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s: ` +
        `${counts?.s} sessions, ${counts?.st} stages, ${counts?.e} executions, ` +
        `${counts?.l} LLM and ${counts?.m} MCP interactions; ${REQUESTS} requests per cell, one at a time\n`,
    );
    const db = createDb({ url: databaseUrl.toString(), poolSize: 2 });
    cleanups.push(() => db.close());

    // The response carries the aggregates (and they are right), or the figures mean nothing.
    const probe = (await (await fetch(`${stack.apiUrl}/api/v1/sessions?page_size=25`)).json()) as {
      sessions: { llm_interaction_count: number; total_stages: number }[];
    };
    const first = probe.sessions[0];
    if (first?.llm_interaction_count !== 12 || first.total_stages !== 3) {
      throw new Error(`unexpected aggregates in the list: ${JSON.stringify(first)}`);
    }

    console.log(
      [
        "page_size".padEnd(11),
        "raw SELECT … LIMIT".padEnd(26),
        "aggregates alone".padEnd(26),
        "GET /api/v1/sessions (HTTP)".padEnd(30),
        "API ÷ raw (p50)",
      ].join(""),
    );
    for (const size of PAGE_SIZES) {
      const raw = await time(
        REQUESTS,
        () => sql`
          SELECT * FROM alert_sessions WHERE deleted_at IS NULL
          ORDER BY created_at DESC, id DESC LIMIT ${size}`,
      );
      const ids = (
        await sql<{ id: string }[]>`
          SELECT id FROM alert_sessions ORDER BY created_at DESC, id DESC LIMIT ${size}`
      ).map((r) => r.id);
      const aggregates = await time(REQUESTS, () => getSessionStats(db.prisma, ids));
      const api = await time(REQUESTS, async () => {
        const res = await fetch(`${stack.apiUrl}/api/v1/sessions?page_size=${size}`);
        if (res.status !== 200) throw new Error(`list answered ${res.status}`);
        await res.arrayBuffer();
      });
      const cell = (t: { p50: number; p95: number }) =>
        `p50 ${ms(t.p50)} p95 ${ms(t.p95)}`.padEnd(26);
      console.log(
        [
          String(size).padEnd(11),
          cell(raw),
          cell(aggregates),
          `p50 ${ms(api.p50)} p95 ${ms(api.p95)}`.padEnd(30),
          `${(api.p50 / raw.p50).toFixed(1)}×`,
        ].join(""),
      );
    }
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    await admin.end();
  }
}

await main();
