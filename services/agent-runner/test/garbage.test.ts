import { randomUUID } from "node:crypto";
import { ExecutionRequestedSchema, WORK_SUBJECTS, workSubject } from "@tarsy/contracts";
import { getExecution } from "@tarsy/db";
import { createMetrics } from "@tarsy/metrics";
import { createLogger } from "@tarsy/runtime";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startWorker } from "../src/worker.ts";
import { StandInGateway } from "./stand-in-gateway.ts";
import {
  collectFinished,
  createEnv,
  type Env,
  runnerDeps,
  seedExecution,
  startLlm,
  waitFor,
} from "./support.ts";

interface Line {
  level: number;
  msg: string;
  subject?: string;
  missing_id?: string;
}

const SUBJECT = WORK_SUBJECTS.executionRequested;

let env: Env;
let stops: (() => Promise<unknown> | unknown)[] = [];
let finished: Awaited<ReturnType<typeof collectFinished>>;
const lines: Line[] = [];
const metrics = createMetrics("agent-runner", { processMetrics: false });

beforeAll(async () => {
  env = await createEnv();
  const llm = await startLlm([{ text: "done" }]);
  stops.push(llm.stop);
  finished = await collectFinished(env.bus);
  stops.push(finished.stop);
  const logger = createLogger({
    service: "agent-runner",
    level: "warn",
    destination: { write: (line: string) => void lines.push(JSON.parse(line) as Line) },
  });
  const worker = await startWorker(
    runnerDeps(env, llm.client, new StandInGateway({}), { logger, metrics }),
    { concurrency: 2, shutdownGraceMs: 1_000 },
  );
  stops.push(() => worker.stop());
});
afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
  stops = [];
  await env?.cleanup();
});

const orphaned = async () =>
  (await metrics.workOrphaned.get()).values.find(
    (v) => v.labels.kind === "execution_requested" && v.labels.missing === "execution",
  )?.value ?? 0;
const deadLetters = async () => (await env.testBus.admin.listDeadLetters({ limit: 1_000 })).items;

async function publishRaw(subject: string, data: string | Uint8Array) {
  const raw = await env.testBus.raw();
  raw.publish(env.bus.subject(subject), data);
  await raw.flush();
}

const request = (over: Record<string, unknown> = {}) => ({
  v: 1,
  session_id: randomUUID(),
  stage_id: randomUUID(),
  execution_id: randomUUID(),
  kind: "investigation",
  agent_name: "InvestigatorAgent",
  agent_index: 1,
  requested_at: new Date().toISOString(),
  ...over,
});

/** A good execution still runs to its end (the consumer is alive and not stuck). */
async function goodExecutionCompletes() {
  const seeded = await seedExecution(env);
  const { executions: _, ...good } = seeded;
  await env.bus.publish("executionRequested", good);
  const done = await waitFor(
    "the good execution",
    () => finished.list.find((f) => f.execution_id === good.execution_id),
    15_000,
  );
  expect(done).toMatchObject({ status: "completed", final_analysis: "done" });
}

describe("execution requests naming missing executions (real Postgres and NATS)", () => {
  test.each([
    ["an unknown execution", () => request()],
    ["an execution id that is no row id", () => request({ execution_id: "exec-1" })],
  ])("%s is acknowledged and dropped with one warn line and a count", async (_name, make) => {
    const before = await orphaned();
    const payload = make();
    await publishRaw(SUBJECT, JSON.stringify(payload));
    await waitFor("the drop", async () => (await orphaned()) === before + 1 || undefined);
    await waitFor(
      "the ack",
      async () => (await env.testBus.admin.workBacklog("runner")) === 0 || undefined,
    );
    expect(await deadLetters()).toEqual([]);
    expect(lines.filter((l) => l.missing_id === payload.execution_id)).toEqual([
      expect.objectContaining({
        level: 40,
        subject: SUBJECT,
        msg: "work message names a missing execution; dropped",
      }),
    ]);
  });

  test("a request naming a real execution under another session neither runs it nor retries", async () => {
    const seeded = await seedExecution(env);
    const before = await orphaned();
    await publishRaw(
      SUBJECT,
      JSON.stringify(request({ execution_id: seeded.execution_id, stage_id: seeded.stage_id })),
    );
    await waitFor("the drop", async () => (await orphaned()) === before + 1 || undefined);
    const row = await getExecution(env.db.prisma, seeded.execution_id);
    expect(row?.status).toBe("pending");
    await goodExecutionCompletes();
  });
});

/** Payloads near a valid request: one field dropped, retyped or replaced. */
const nearMiss = fc
  .tuple(
    fc.constantFrom(...Object.keys(request())),
    fc.oneof(
      fc.constant(undefined),
      fc.jsonValue({ maxDepth: 2 }),
      fc.constantFrom(2, "", "not-a-uuid", null, -1),
    ),
  )
  .map(([key, value]) => {
    const payload: Record<string, unknown> = request();
    if (value === undefined) delete payload[key];
    else payload[key] = value;
    return JSON.stringify(payload);
  });

const bodies = fc.oneof(
  fc.uint8Array({ maxLength: 200 }),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  nearMiss,
  fc.constant(null).map(() => JSON.stringify(request())),
);

/** What the runner must do with a body: dead-letter it, or drop it as orphaned. */
function expected(body: string | Uint8Array, subject: string): "dead_letter" | "orphaned" {
  if (subject !== SUBJECT) return "dead_letter";
  try {
    const text = typeof body === "string" ? body : new TextDecoder().decode(body);
    return ExecutionRequestedSchema.safeParse(JSON.parse(text)).success
      ? "orphaned"
      : "dead_letter";
  } catch {
    return "dead_letter";
  }
}

describe("payload fuzz on the runner's work subjects", () => {
  test("every message is dead-lettered as invalid or dropped as orphaned; the runner keeps working", async () => {
    const seen = { dead_letter: 0, orphaned: 0 };
    await fc.assert(
      fc.asyncProperty(
        bodies,
        fc.constantFrom(SUBJECT, workSubject("runner", "no_such_kind")),
        async (body, subject) => {
          const letters = (await deadLetters()).length;
          const drops = await orphaned();
          await publishRaw(subject, body);
          const outcome = await waitFor("an outcome", async () => {
            const [l, d] = [(await deadLetters()).length, await orphaned()];
            if (l === letters + 1 && d === drops) return "dead_letter";
            if (d === drops + 1 && l === letters) return "orphaned";
            return undefined;
          });
          expect(outcome).toBe(expected(body, subject));
          seen[outcome]++;
          if (outcome === "dead_letter") {
            const letter = (await deadLetters()).at(-1)?.letter;
            expect(letter?.original_subject).toBe(subject);
            expect(letter?.deliveries).toBe(1);
            expect(letter?.error).toMatch(
              /^(invalid JSON|invalid executionRequested payload|no handler for subject)/,
            );
          }
        },
      ),
      { numRuns: 40, seed: 20261125, interruptAfterTimeLimit: 30_000 },
    );
    // Both ways out were exercised.
    expect(seen.dead_letter).toBeGreaterThan(5);
    expect(seen.orphaned).toBeGreaterThan(2);
    await waitFor(
      "an empty queue",
      async () => (await env.testBus.admin.workBacklog("runner")) === 0 || undefined,
    );
    await goodExecutionCompletes();
    expect(lines.filter((l) => l.level >= 50 && l.msg !== "message dead-lettered")).toEqual([]);
  }, 60_000);
});
