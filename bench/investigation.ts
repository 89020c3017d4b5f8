/**
 * Whole-system benchmark: how much time orchestration adds to the LLM's own time.
 * Boots every service as a process (demo config, scripted LLM with every delay removed, so the
 * "LLM" answers instantly), runs investigations one at a time and 8 at once, and prints per
 * session: wall time, stages, ms per stage, and the raw LLM time from the trace (the baseline
 * measured in the same run). Then, per hop of the critical path, the median time over the
 * sequential sessions (read back from what the services stored), beside raw baselines of the
 * same run (a JetStream publish → consume, a Postgres transaction, a process start), and the
 * CPU time each service spent per session.
 *
 *   pnpm --filter @tarsy/bench investigation     (Postgres on DATABASE_URL or 127.0.0.1; NATS local)
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startStack } from "@tarsy/stack";
import postgres from "postgres";
import { parse, stringify } from "yaml";
import {
  natsPublishToConsume,
  postgresTransaction,
  processSpawn,
} from "./investigation/baselines.ts";
import { type Hops, medianHops, sessionHops } from "./investigation/hops.ts";

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
const baseUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const id = randomBytes(3).toString("hex");
const dbName = `tarsy_bench_${id}`;
const admin = postgres(baseUrl, { max: 1, onnotice: () => {} });
await admin.unsafe(`CREATE DATABASE ${dbName}`);
const url = new URL(baseUrl);
url.pathname = `/${dbName}`;

// The demo script without its pacing: an instant LLM.
const script = parse(readFileSync(join(root, "deploy/demo/llm-script.yaml"), "utf8")) as {
  responses: Record<string, unknown>[];
};
for (const r of script.responses) {
  delete r.delay_ms;
  delete r.chunk_delay_ms;
}
const scriptPath = join(mkdtempSync(join(tmpdir(), "tarsy-bench-")), "script.yaml");
writeFileSync(scriptPath, stringify(script));

const stack = await startStack({
  root,
  configDir: join(root, "deploy/demo"),
  llmScriptPath: scriptPath,
  databaseUrl: url.toString(),
  prefix: `bench${id}`,
  streamSuffix: `_BENCH${id.toUpperCase()}`,
  logLevel: "info", // the stack knows a service is up by its "service started" line
  log: () => {},
  env: { TARSY_REPO_ROOT: root },
});

interface Detail {
  status: string;
  created_at: string;
  completed_at: string | null;
  stages: unknown[];
}
interface Trace {
  stages: { executions: { llm_interactions: { duration_ms: number | null }[] }[] }[];
  session_interactions: { duration_ms: number | null }[];
}
const api = async <T>(path: string, init?: RequestInit): Promise<T> =>
  (await (await fetch(`${stack.apiUrl}${path}`, init)).json()) as T;

async function investigate(): Promise<{
  sessionId: string;
  wallMs: number;
  stages: number;
  llmMs: number;
}> {
  const started = Date.now();
  const { session_id } = await api<{ session_id: string }>("/api/v1/alerts", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ alert_type: "PodCrashLooping", data: { namespace: "payments" } }),
  });
  for (;;) {
    const d = await api<Detail>(`/api/v1/sessions/${session_id}`);
    if (d.status === "completed" || d.status === "failed") {
      const wallMs = Date.now() - started;
      const trace = await api<Trace>(`/api/v1/sessions/${session_id}/trace`);
      // Critical path: the stages run one after another; parallel agents overlap, so take
      // the slowest execution of each stage.
      let llmMs = 0;
      for (const stage of trace.stages) {
        llmMs += Math.max(
          0,
          ...stage.executions.map((e) =>
            e.llm_interactions.reduce((s, i) => s + (i.duration_ms ?? 0), 0),
          ),
        );
      }
      llmMs += trace.session_interactions.reduce((s, i) => s + (i.duration_ms ?? 0), 0);
      return { sessionId: session_id, wallMs, stages: d.stages.length, llmMs };
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

const fmt = (r: { wallMs: number; stages: number; llmMs: number }) =>
  `wall ${r.wallMs} ms, ${r.stages} stages (+summary), ${Math.round(r.wallMs / (r.stages + 1))} ms/step, raw LLM time ${r.llmMs} ms, orchestration ${Math.round((r.wallMs - r.llmMs) / (r.stages + 1))} ms/step`;

console.log(
  "whole-system benchmark: instant scripted LLM, demo chain (triage → 2 parallel agents → synthesis → summary)\n",
);
/** CPU time (user + system, its exited children included) of each service process, in ms. */
function cpuByService(): Map<string, number> {
  const tick = 1000 / 100; // USER_HZ
  const cpu = new Map<string, number>();
  for (const p of stack.processes) {
    if (!p.child.pid) continue;
    const fields =
      readFileSync(`/proc/${p.child.pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    // utime, stime, cutime, cstime: fields 14–17 of stat, 12–15 after "(comm) ".
    const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i] ?? 0), 0);
    const service = p.name.replace(/-\d+$/, "");
    cpu.set(service, (cpu.get(service) ?? 0) + ticks * tick);
  }
  return cpu;
}

await investigate(); // warm-up (MCP server start, JIT)
const SEQUENTIAL = Number(process.env.SESSIONS ?? 5);
const sql = postgres(url.toString(), { max: 1, onnotice: () => {} });
const hops: Hops[] = [];
const cpuBefore = cpuByService();
for (let i = 0; i < SEQUENTIAL; i++) {
  const r = await investigate();
  console.log(`sequential #${i + 1}: ${fmt(r)}`);
  hops.push(await sessionHops(sql, r.sessionId));
}
const cpuAfter = cpuByService();
console.log(`\nwhere the time goes (median of ${SEQUENTIAL} sessions, critical path, ms):`);
for (const { label, ms } of medianHops(hops))
  console.log(`  ${label.padEnd(46)} ${String(ms).padStart(6)}`);
console.log("\nraw baselines, same run (median ms):");
console.log(
  `  JetStream publish → pull consumer has it       ${(await natsPublishToConsume(stack.natsUrl, 50)).toFixed(1).padStart(6)}`,
);
console.log(
  `  Postgres transaction (insert, update, commit)  ${(await postgresTransaction(sql, 50)).toFixed(1).padStart(6)}`,
);
console.log(
  `  process start (node -e 0)                      ${(await processSpawn(10)).toFixed(1).padStart(6)}`,
);
console.log("\nCPU per session by service (ms):");
for (const [service, after] of cpuAfter) {
  const per = (after - (cpuBefore.get(service) ?? 0)) / SEQUENTIAL;
  console.log(`  ${service.padEnd(46)} ${per.toFixed(0).padStart(6)}`);
}
await sql.end();
console.log("");
const t0 = Date.now();
const parallel = await Promise.all(Array.from({ length: 8 }, () => investigate()));
console.log(
  `8 at once: all done in ${Date.now() - t0} ms; median wall ${parallel.map((p) => p.wallMs).sort((a, b) => a - b)[4]} ms`,
);
await stack.stop();
await admin.unsafe(`DROP DATABASE ${dbName} WITH (FORCE)`);
await admin.end();
process.exit(0);
