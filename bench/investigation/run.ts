/**
 * The whole-system benchmark (see ../investigation.ts), as a function: boots the stack on a
 * database of its own, runs the sessions and prints through `log`. The CLI runs it at full
 * size; a CI smoke test runs it small so it cannot rot.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startStack } from "@tarsy/stack";
import postgres from "postgres";
import { parse, stringify } from "yaml";
import { natsPublishToConsume, postgresTransaction, processSpawn } from "./baselines.ts";
import { type Hops, medianHops, sessionHops } from "./hops.ts";

const root = resolve(fileURLToPath(new URL("../..", import.meta.url)));

export interface InvestigationBenchOptions {
  /** Postgres server to create the benchmark's database on. */
  databaseUrl: string;
  /** NATS (JetStream) URL; unset: the stack's default. */
  natsUrl?: string | undefined;
  /** Sessions run one at a time (after a warm-up). */
  sequential: number;
  /** Sessions run at once, after those. */
  parallel: number;
  log: (line: string) => void;
}

export interface InvestigationBenchResult {
  sequentialWallMs: number[];
  hops: { label: string; ms: number }[];
  baselines: { natsMs: number; postgresMs: number; spawnMs: number };
  cpuPerSession: Record<string, number>;
  parallelAllMs: number;
}

interface Detail {
  status: string;
  stages: unknown[];
}
interface Trace {
  stages: { executions: { llm_interactions: { duration_ms: number | null }[] }[] }[];
  session_interactions: { duration_ms: number | null }[];
}

export async function runInvestigationBench(
  options: InvestigationBenchOptions,
): Promise<InvestigationBenchResult> {
  const { log } = options;
  const id = randomBytes(3).toString("hex");
  const dbName = `tarsy_bench_${id}`;
  const admin = postgres(options.databaseUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${dbName}`);
  const url = new URL(options.databaseUrl);
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
    ...(options.natsUrl ? { natsUrl: options.natsUrl } : {}),
    prefix: `bench${id}`,
    streamSuffix: `_BENCH${id.toUpperCase()}`,
    logLevel: "info", // the stack knows a service is up by its "service started" line
    log: () => {},
    env: { TARSY_REPO_ROOT: root },
  });
  const sql = postgres(url.toString(), { max: 1, onnotice: () => {} });
  try {
    const api = async <T>(path: string, init?: RequestInit): Promise<T> =>
      (await (await fetch(`${stack.apiUrl}${path}`, init)).json()) as T;

    const investigate = async () => {
      const started = Date.now();
      const { session_id } = await api<{ session_id: string }>("/api/v1/alerts", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ alert_type: "PodCrashLooping", data: { namespace: "payments" } }),
      });
      for (;;) {
        const d = await api<Detail>(`/api/v1/sessions/${session_id}`);
        if (d.status === "failed") throw new Error(`session ${session_id} failed`);
        if (d.status === "completed") {
          const wallMs = Date.now() - started;
          const trace = await api<Trace>(`/api/v1/sessions/${session_id}/trace`);
          // Critical path: the stages run one after another; parallel agents overlap, so
          // take the slowest execution of each stage.
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
    };

    const fmt = (r: { wallMs: number; stages: number; llmMs: number }) =>
      `wall ${r.wallMs} ms, ${r.stages} stages (+summary), ${Math.round(r.wallMs / (r.stages + 1))} ms/step, raw LLM time ${r.llmMs} ms, orchestration ${Math.round((r.wallMs - r.llmMs) / (r.stages + 1))} ms/step`;

    /** CPU time (user + system, its exited children included) of each service, in ms. */
    const cpuByService = (): Map<string, number> => {
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
    };

    log(
      "whole-system benchmark: instant scripted LLM, demo chain (triage → 2 parallel agents → synthesis → summary)\n",
    );
    await investigate(); // warm-up (MCP server start, JIT)
    const hops: Hops[] = [];
    const sequentialWallMs: number[] = [];
    const cpuBefore = cpuByService();
    for (let i = 0; i < options.sequential; i++) {
      const r = await investigate();
      log(`sequential #${i + 1}: ${fmt(r)}`);
      sequentialWallMs.push(r.wallMs);
      hops.push(await sessionHops(sql, r.sessionId));
    }
    const cpuAfter = cpuByService();
    const hopRows = medianHops(hops);
    log(`\nwhere the time goes (median of ${options.sequential} sessions, critical path, ms):`);
    for (const { label, ms } of hopRows) log(`  ${label.padEnd(46)} ${String(ms).padStart(6)}`);

    const baselines = {
      natsMs: await natsPublishToConsume(stack.natsUrl, 50),
      postgresMs: await postgresTransaction(sql, 50),
      spawnMs: await processSpawn(10),
    };
    log("\nraw baselines, same run (median ms):");
    log(
      `  ${"JetStream publish → pull consumer has it".padEnd(46)} ${baselines.natsMs.toFixed(1).padStart(6)}`,
    );
    log(
      `  ${"Postgres transaction (insert, update, commit)".padEnd(46)} ${baselines.postgresMs.toFixed(1).padStart(6)}`,
    );
    log(`  ${"process start (node -e 0)".padEnd(46)} ${baselines.spawnMs.toFixed(1).padStart(6)}`);

    const cpuPerSession: Record<string, number> = {};
    log("\nCPU per session by service (ms):");
    for (const [service, after] of cpuAfter) {
      const per = (after - (cpuBefore.get(service) ?? 0)) / options.sequential;
      cpuPerSession[service] = per;
      log(`  ${service.padEnd(46)} ${per.toFixed(0).padStart(6)}`);
    }

    const t0 = Date.now();
    const parallel = await Promise.all(Array.from({ length: options.parallel }, investigate));
    const parallelAllMs = Date.now() - t0;
    const walls = parallel.map((p) => p.wallMs).sort((a, b) => a - b);
    log(
      `\n${options.parallel} at once: all done in ${parallelAllMs} ms (${((options.parallel * 1000) / parallelAllMs).toFixed(2)} sessions/s); median wall ${walls[Math.floor(walls.length / 2)]} ms`,
    );
    return { sequentialWallMs, hops: hopRows, baselines, cpuPerSession, parallelAllMs };
  } finally {
    await sql.end();
    await stack.stop();
    await admin.unsafe(`DROP DATABASE ${dbName} WITH (FORCE)`);
    await admin.end();
  }
}
