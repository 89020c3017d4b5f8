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
 *   pnpm --filter @tarsy/bench investigation     (Postgres on DATABASE_URL or 127.0.0.1; NATS local;
 *                                                  SESSIONS=5 one at a time, PARALLEL=8 at once)
 */
import { runInvestigationBench } from "./investigation/run.ts";

await runInvestigationBench({
  databaseUrl: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
  natsUrl: process.env.NATS_URL,
  sequential: Number(process.env.SESSIONS ?? 5),
  parallel: Number(process.env.PARALLEL ?? 8),
  log: (line) => console.log(line),
});
process.exit(0);
