/**
 * Whole-system benchmark: investigations while llm-service replicas are killed (-9) and
 * restarted. Two llm-service replicas, an instant scripted LLM (test/e2e/testdata/llm-restarts
 * without its pacing), 4 sessions in flight at a time: first quietly, then with one replica
 * killed and restarted every 5 s, in the same run. Prints sessions completed and failed (must
 * be 0) and throughput of both phases, and their ratio (target ≥ 80%).
 *
 *   pnpm --filter @tarsy/bench llm-restarts [seconds per phase, default 60]
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type SessionStatus, TERMINAL_SESSION_STATUSES } from "@tarsy/contracts";
import { type RunningProcess, startStack } from "@tarsy/stack";
import postgres from "postgres";
import { parse, stringify } from "yaml";

const seconds = Number(process.argv[2] ?? 60);
if (!Number.isFinite(seconds) || seconds <= 0) {
  console.error("usage: llm-restarts.ts [seconds per phase]");
  process.exit(2);
}
const IN_FLIGHT = 4;
const KILL_EVERY_MS = 5_000;

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
const configDir = join(root, "test/e2e/testdata/llm-restarts");
const baseUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const id = randomBytes(3).toString("hex");
const dbName = `tarsy_bench_${id}`;
const admin = postgres(baseUrl, { max: 1, onnotice: () => {} });
await admin.unsafe(`CREATE DATABASE ${dbName}`);
const url = new URL(baseUrl);
url.pathname = `/${dbName}`;

// The scenario's script without its pacing: an instant LLM.
const script = parse(readFileSync(join(configDir, "llm-script.yaml"), "utf8")) as {
  responses: Record<string, unknown>[];
};
for (const r of script.responses) delete r.chunk_delay_ms;
const scriptPath = join(mkdtempSync(join(tmpdir(), "tarsy-bench-")), "script.yaml");
writeFileSync(scriptPath, stringify(script));

const stack = await startStack({
  root,
  configDir,
  llmScriptPath: scriptPath,
  databaseUrl: url.toString(),
  prefix: `bench${id}`,
  streamSuffix: `_BENCH${id.toUpperCase()}`,
  replicas: { "llm-service": 2, "agent-runner": 2 },
  // info: the stack waits for each process's "service started" line.
  logLevel: "info",
  log: () => {},
  env: { TARSY_REPO_ROOT: root },
});

const api = async <T>(path: string, init?: RequestInit): Promise<T> =>
  (await (await fetch(`${stack.apiUrl}${path}`, init)).json()) as T;

async function investigate(): Promise<string> {
  const { session_id } = await api<{ session_id: string }>("/api/v1/alerts", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ alert_type: "Narrate", data: { namespace: "payments" } }),
  });
  for (;;) {
    const d = await api<{ status: SessionStatus }>(`/api/v1/sessions/${session_id}`);
    if (TERMINAL_SESSION_STATUSES.includes(d.status)) return d.status;
    await new Promise((r) => setTimeout(r, 20));
  }
}

interface Phase {
  completed: number;
  failed: number;
  seconds: number;
  kills: number;
}

async function phase(chaos: boolean): Promise<Phase> {
  const started = Date.now();
  const end = started + seconds * 1000;
  const result: Phase = { completed: 0, failed: 0, seconds: 0, kills: 0 };
  const worker = async () => {
    while (Date.now() < end) {
      if ((await investigate()) === "completed") result.completed++;
      else result.failed++;
    }
  };
  const killer = async () => {
    while (Date.now() + KILL_EVERY_MS < end) {
      await new Promise((r) => setTimeout(r, KILL_EVERY_MS));
      const alive = stack.processes.filter(
        (p: RunningProcess) =>
          p.name.startsWith("llm-service-") &&
          p.child.exitCode === null &&
          p.child.signalCode === null,
      );
      const victim = alive[result.kills % alive.length];
      if (!victim) continue;
      await victim.kill();
      result.kills++;
      await stack.start("llm-service");
    }
  };
  await Promise.all([
    ...Array.from({ length: IN_FLIGHT }, () => worker()),
    ...(chaos ? [killer()] : []),
  ]);
  result.seconds = (Date.now() - started) / 1000;
  return result;
}

const rate = (p: Phase) => p.completed / p.seconds;
const show = (name: string, p: Phase) =>
  `${name}: ${p.completed} completed, ${p.failed} failed in ${p.seconds.toFixed(1)} s → ${rate(p).toFixed(2)} sessions/s${p.kills ? ` (${p.kills} llm-service kills)` : ""}`;

console.log(
  `llm-restarts benchmark: instant scripted LLM, 2 llm-service replicas, ${IN_FLIGHT} sessions in flight, ${seconds} s per phase\n`,
);
await investigate(); // warm-up (MCP server start, JIT)
const quiet = await phase(false);
console.log(show("quiet", quiet));
const chaos = await phase(true);
console.log(show(`kill -9 + restart every ${KILL_EVERY_MS / 1000} s`, chaos));
console.log(`throughput ratio: ${((100 * rate(chaos)) / rate(quiet)).toFixed(1)}% (target ≥ 80%)`);
await stack.stop();
await admin.unsafe(`DROP DATABASE ${dbName} WITH (FORCE)`);
await admin.end();
process.exit(chaos.failed + quiet.failed === 0 ? 0 : 1);
