import { SESSIONS_EVENTS_SUBJECT } from "@tarsy/contracts";
import { createDb, createSession, type OutboxEntry } from "@tarsy/db";
import { forceSessionEnd, storedSessionDeletions } from "@tarsy/db/testing";
import { createMetrics, type OpsServer, type ServiceMetrics, startOpsServer } from "@tarsy/metrics";
import { createTestBus, createTestDb, type TestDb } from "@tarsy/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startOrchestrator } from "../src/orchestrator.ts";
import { startRetentionJob } from "../src/retention-job.ts";
import { logger, simpleChainConfig } from "./harness.ts";

const DAY = 86_400_000;
const retention = {
  session_retention_days: 30,
  event_ttl_ms: 7 * DAY,
  cleanup_interval_ms: 3_600_000,
  hard_delete_after_ms: 10 * DAY,
};

describe("the retention job (real Postgres)", () => {
  let testDb: TestDb;
  let ops: OpsServer;
  let metrics: ServiceMetrics<"orchestrator">;

  beforeEach(async () => {
    testDb = await createTestDb();
    metrics = createMetrics("orchestrator", { processMetrics: false });
    ops = await startOpsServer({
      host: "127.0.0.1",
      port: 0,
      registry: metrics.registry,
      logger,
      ready: {},
    });
  });
  afterEach(async () => {
    await ops?.close();
    await testDb?.cleanup();
  });

  const session = async (completedAgoMs: number, deletedAgoMs: number | null = null) => {
    const { session } = await createSession(testDb.db.prisma, {
      project: "default",
      alertData: "a",
      alertType: "kubernetes",
      chainId: "k8s-chain",
    });
    await forceSessionEnd(testDb.db.prisma, session.id, {
      status: "completed",
      completedAt: new Date(Date.now() - completedAgoMs),
      deletedAt: deletedAgoMs === null ? null : new Date(Date.now() - deletedAgoMs),
    });
    return session.id;
  };

  /** The sample of `name` (with `label` if given) as Prometheus scrapes it. */
  const scraped = async (name: string, label = ""): Promise<number | undefined> => {
    const text = await (await fetch(`${ops.url}/metrics`)).text();
    const line = text.split("\n").find((l) => l.startsWith(`${name}{`) && l.includes(label));
    return line === undefined ? undefined : Number(line.split(" ").at(-1));
  };

  it("deletes by the configured retention, relays each session.deleted, and counts what it did", async () => {
    const flushed: OutboxEntry<"sessionDeleted">[] = [];
    const job = startRetentionJob(testDb.db.prisma, {
      retention,
      logger,
      metrics,
      intervalMs: 3_600_000,
      batchSize: 1,
      flushOutbox: async (entries) => void flushed.push(...entries),
    });
    try {
      // The run at start: nothing yet.
      expect(await job.run()).toEqual({
        ran: true,
        softDeleted: 0,
        hardDeleted: 0,
        outboxPurged: 0,
      });
      const old1 = await session(31 * DAY);
      const old2 = await session(40 * DAY);
      const kept = await session(29 * DAY);
      const erased = await session(100 * DAY, 11 * DAY);
      expect(await job.run()).toMatchObject({ ran: true, softDeleted: 2, hardDeleted: 1 });
      expect(flushed.map((e) => e.payload.session_id).sort()).toEqual([old1, old2].sort());
      const rows = await storedSessionDeletions(testDb.db.prisma);
      expect(rows.get(kept)).toBeNull();
      expect(rows.has(erased)).toBe(false);
      expect(await scraped("tarsy_retention_sessions_deleted_total", 'phase="soft"')).toBe(2);
      expect(await scraped("tarsy_retention_sessions_deleted_total", 'phase="hard"')).toBe(1);
      expect(await scraped("tarsy_retention_runs_total", 'outcome="ran"')).toBeGreaterThanOrEqual(
        2,
      );
      expect(await scraped("tarsy_retention_runs_total", 'outcome="skipped"')).toBe(0);
      expect(await scraped("tarsy_retention_outbox_purged_total")).toBe(0);
    } finally {
      await job.stop();
    }
  });

  it("two replicas: while one holds the run, the other's round is skipped and counted", async () => {
    const other = createDb({ url: testDb.database.url, poolSize: 3 });
    const otherMetrics = createMetrics("orchestrator", { processMetrics: false });
    await session(31 * DAY);
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    let entered!: () => void;
    const inside = new Promise<void>((r) => {
      entered = r;
    });
    const a = startRetentionJob(testDb.db.prisma, {
      retention,
      logger,
      metrics,
      intervalMs: 3_600_000,
      flushOutbox: async () => {
        entered();
        await released;
      },
    });
    const b = startRetentionJob(other.prisma, {
      retention,
      logger,
      metrics: otherMetrics,
      intervalMs: 3_600_000,
    });
    try {
      const runA = a.run();
      await inside;
      expect(await b.run()).toEqual({ ran: false, reason: "locked" });
      release();
      expect(await runA).toMatchObject({ ran: true, softDeleted: 1 });
      expect(await b.run()).toMatchObject({ ran: true, softDeleted: 0 });
      const text = await otherMetrics.registry.metrics();
      expect(text).toMatch(/tarsy_retention_runs_total\{[^}]*outcome="skipped"[^}]*\} [1-9]/);
    } finally {
      release();
      await a.stop();
      await b.stop();
      await other.close();
    }
  });

  it("the orchestrator runs it at start and on its interval, and relays each session.deleted to NATS", async () => {
    const nats = await createTestBus();
    const config = simpleChainConfig({ queue: {} });
    config.system.retention = { ...retention };
    const old = await session(31 * DAY);
    const orchestrator = await startOrchestrator(
      { db: testDb.db.prisma, bus: nats.bus, config, logger, metrics },
      {
        podId: "orch-retention",
        concurrency: 1,
        sweepIntervalMs: 3_600_000,
        staleAfterMs: 60_000,
        outboxIntervalMs: 3_600_000,
        retentionIntervalMs: 100,
      },
    );
    try {
      // The run at start soft-deletes it and publishes its event on the sessions channel.
      const deadline = Date.now() + 10_000;
      let ids: string[] = [];
      while (!ids.includes(old)) {
        if (Date.now() > deadline) throw new Error("no session.deleted for the old session");
        const { events } = await nats.bus.replayEvents({
          subject: SESSIONS_EVENTS_SUBJECT,
          afterSeq: 0,
          limit: 100,
        });
        ids = events.flatMap((e) =>
          e.payload.type === "session.deleted" ? [e.payload.session_id] : [],
        );
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(ids).toEqual([old]);
      // A session that ends up past retention later is taken by a later round.
      const later = await session(45 * DAY);
      while ((await storedSessionDeletions(testDb.db.prisma)).get(later) === null) {
        if (Date.now() > deadline) throw new Error("no later round deleted the second session");
        await new Promise((r) => setTimeout(r, 50));
      }
      // The round that deleted it has counted it once it returns (run() joins a round in flight).
      await orchestrator.retention.run();
      expect(await scraped("tarsy_retention_sessions_deleted_total", 'phase="soft"')).toBe(2);
    } finally {
      await orchestrator.stop();
      await nats.cleanup();
    }
  });
});
