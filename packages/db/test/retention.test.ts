import type { SessionStatus } from "@tarsy/contracts";
import { describe, expect } from "vitest";
import {
  createDb,
  type DbClient,
  RETENTION_LOCK_KEY,
  type RetentionCutoffs,
  relayOutbox,
  runRetention,
} from "../src/index.ts";
import { newSession } from "./fixtures.ts";
import { dbTest as test, withSql } from "./support.ts";

const DAY = 86_400_000;
const ago = (ms: number) => new Date(Date.now() - ms);

/** A session in `status`, completed `completedAgoMs` ago (null: never), optionally soft-deleted. */
async function sessionAt(
  client: DbClient,
  status: SessionStatus,
  completedAgoMs: number | null,
  deletedAgoMs: number | null = null,
): Promise<string> {
  const session = await newSession(client);
  await client.alertSession.update({
    where: { id: session.id },
    data: {
      status,
      completedAt: completedAgoMs === null ? null : ago(completedAgoMs),
      deletedAt: deletedAgoMs === null ? null : ago(deletedAgoMs),
    },
  });
  return session.id;
}

/** One row in every table that hangs off a session (directly or through its children). */
async function withEveryChild(url: string, sessionId: string): Promise<void> {
  await withSql(url, async (sql) => {
    const [chat] = await sql`
      INSERT INTO chats (session_id, created_by) VALUES (${sessionId}, 'alice') RETURNING id`;
    const [question] = await sql`
      INSERT INTO chat_user_messages (chat_id, author, content)
      VALUES (${chat?.id}, 'alice', 'why?') RETURNING id`;
    const [stage] = await sql`
      INSERT INTO stages (session_id, stage_name, stage_index, chat_id, chat_user_message_id)
      VALUES (${sessionId}, 'investigate', 0, ${chat?.id}, ${question?.id}) RETURNING id`;
    const [execution] = await sql`
      INSERT INTO agent_executions (session_id, stage_id, agent_name)
      VALUES (${sessionId}, ${stage?.id}, 'Investigator') RETURNING id`;
    const [message] = await sql`
      INSERT INTO messages (session_id, stage_id, execution_id, sequence_number, role, content)
      VALUES (${sessionId}, ${stage?.id}, ${execution?.id}, 1, 'user', 'hello') RETURNING id`;
    await sql`
      INSERT INTO timeline_events (session_id, stage_id, execution_id, sequence_number, event_type)
      VALUES (${sessionId}, ${stage?.id}, ${execution?.id}, 1, 'llm_response')`;
    await sql`
      INSERT INTO llm_interactions (session_id, stage_id, execution_id, interaction_type, model_name, last_message_id)
      VALUES (${sessionId}, ${stage?.id}, ${execution?.id}, 'iteration', 'm', ${message?.id})`;
    await sql`
      INSERT INTO mcp_interactions (session_id, stage_id, execution_id, server_name, interaction_type)
      VALUES (${sessionId}, ${stage?.id}, ${execution?.id}, 'kubernetes', 'tool_call')`;
    await sql`
      INSERT INTO notification_deliveries (session_id, target, event)
      VALUES (${sessionId}, 'slack', 'session.completed')`;
    // A memory learned from the session outlives it (its source becomes null); where the
    // session was given memories goes with it.
    const [memory] = await sql`
      INSERT INTO investigation_memories (project, content, category, valence, source_session_id)
      VALUES ('default', 'learned', 'semantic', 'neutral', ${sessionId}) RETURNING id`;
    await sql`
      INSERT INTO session_injected_memories (session_id, memory_id)
      VALUES (${sessionId}, ${memory?.id})`;
  });
}

/**
 * Tables that may keep a session id after the session is erased: the audit log records who
 * did what (it holds no session data) and outlives what it describes.
 */
const KEEPS_ERASED_SESSION_IDS = new Set(["audit_log"]);

/**
 * Rows, per table, that reference a session (by a `session_id` column) or a stage, execution,
 * chat or message (by their id columns) that no longer exists. Every table with such a column
 * is checked, so a table added later is covered without touching this test.
 */
async function orphans(url: string): Promise<Record<string, number>> {
  const parents: Record<string, string> = {
    session_id: "alert_sessions",
    stage_id: "stages",
    execution_id: "agent_executions",
    chat_id: "chats",
    chat_user_message_id: "chat_user_messages",
    last_message_id: "messages",
  };
  return withSql(url, async (sql) => {
    const columns = await sql<{ table_name: string; column_name: string }[]>`
      SELECT c.table_name, c.column_name FROM information_schema.columns c
      JOIN information_schema.tables t USING (table_schema, table_name)
      WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
        AND c.column_name IN ${sql(Object.keys(parents))} ORDER BY 1, 2`;
    const found: Record<string, number> = {};
    for (const { table_name, column_name } of columns) {
      if (KEEPS_ERASED_SESSION_IDS.has(table_name)) continue;
      const parent = parents[column_name] as string;
      const [row] = await sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM ${sql(table_name)} x
        WHERE x.${sql(column_name)} IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM ${sql(parent)} p WHERE p.id = x.${sql(column_name)})`;
      found[`${table_name}.${column_name}`] = row?.n ?? 0;
    }
    return found;
  });
}

/** Rows, per table with a `session_id` column, that belong to `sessionId`. */
async function rowsOf(url: string, sessionId: string): Promise<Record<string, number>> {
  return withSql(url, async (sql) => {
    const tables = await sql<{ table_name: string }[]>`
      SELECT c.table_name FROM information_schema.columns c
      JOIN information_schema.tables t USING (table_schema, table_name)
      WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
        AND c.column_name = 'session_id' ORDER BY 1`;
    const found: Record<string, number> = {};
    for (const { table_name } of tables) {
      const [row] = await sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM ${sql(table_name)} WHERE session_id = ${sessionId}`;
      found[table_name] = row?.n ?? 0;
    }
    return found;
  });
}

const cutoffs = (retentionMs: number, graceMs: number, outboxKeepMs = DAY): RetentionCutoffs => ({
  softDeleteBefore: ago(retentionMs),
  hardDeleteBefore: ago(graceMs),
  outboxPublishedBefore: ago(outboxKeepMs),
});

describe("retention", () => {
  test("soft-deletes ended sessions past retention (with their event), never active ones, and erases those past grace with every dependent row", async ({
    db,
    database,
  }) => {
    const retention = 10 * DAY;
    const grace = 5 * DAY;
    const p = db.prisma;
    const justOutside = await sessionAt(p, "completed", retention + 60_000);
    const failedOld = await sessionAt(p, "failed", 400 * DAY);
    const timedOutOld = await sessionAt(p, "timed_out", retention + DAY);
    const cancelledOld = await sessionAt(p, "cancelled", retention + DAY);
    const justInside = await sessionAt(p, "completed", retention - 60_000);
    const runningOld = await sessionAt(p, "in_progress", null);
    const pendingOld = await sessionAt(p, "pending", null);
    const cancellingOld = await sessionAt(p, "cancelling", null);
    // Active sessions whatever their age: even with an old completion time somehow stored.
    const runningWithOldStamp = await sessionAt(p, "in_progress", 400 * DAY);
    await p.alertSession.updateMany({
      where: { id: { in: [runningOld, pendingOld, cancellingOld] } },
      data: { createdAt: ago(400 * DAY) },
    });
    const withinGrace = await sessionAt(p, "completed", 400 * DAY, grace - 60_000);
    const pastGrace = await sessionAt(p, "completed", 400 * DAY, grace + 60_000);
    const pastGrace2 = await sessionAt(p, "failed", 400 * DAY, 300 * DAY);
    await withEveryChild(database.url, pastGrace);
    await withEveryChild(database.url, pastGrace2);
    await withEveryChild(database.url, withinGrace);
    await withEveryChild(database.url, justInside);
    await p.auditEntry.create({
      data: {
        actor: "alice",
        identitySource: "proxy",
        action: "session.cancel",
        outcome: "allowed",
        method: "POST",
        path: `/api/v1/sessions/${pastGrace}/cancel`,
        status: 202,
        sessionId: pastGrace,
      },
    });
    // Everything written so far went out long ago, except one row published just now.
    await relayOutbox(p, async () => {});
    await p.outboxMessage.updateMany({ data: { publishedAt: ago(2 * DAY) } });
    const recent = await p.outboxMessage.findFirstOrThrow({
      where: { payload: { path: ["session_id"], equals: justInside } },
    });
    await p.outboxMessage.update({ where: { id: recent.id }, data: { publishedAt: new Date() } });
    const outboxBefore = await p.outboxMessage.count();

    const announced: string[] = [];
    const run = await runRetention(p, cutoffs(retention, grace), {
      batchSize: 2,
      onSoftDeleted: async (entries) => {
        for (const e of entries) announced.push(e.payload.session_id);
      },
    });
    expect(run).toEqual({
      ran: true,
      softDeleted: 4,
      hardDeleted: 2,
      outboxPurged: outboxBefore - 1,
    });

    const softDeleted = [justOutside, failedOld, timedOutOld, cancelledOld];
    expect(announced.sort()).toEqual([...softDeleted].sort());
    const rows = await p.alertSession.findMany({ select: { id: true, deletedAt: true } });
    const deleted = new Map(rows.map((r) => [r.id, r.deletedAt !== null]));
    for (const id of softDeleted) expect(deleted.get(id), id).toBe(true);
    for (const id of [justInside, runningOld, pendingOld, cancellingOld, runningWithOldStamp]) {
      expect(deleted.get(id), id).toBe(false);
    }
    expect(deleted.get(withinGrace)).toBe(true);
    expect(deleted.has(pastGrace)).toBe(false);
    expect(deleted.has(pastGrace2)).toBe(false);

    // Each soft delete wrote its `session.deleted` message, unpublished until relayed.
    const messages = await p.outboxMessage.findMany({ where: { messageKey: "sessionDeleted" } });
    expect(messages.map((m) => (m.payload as { session_id: string }).session_id).sort()).toEqual(
      [...softDeleted].sort(),
    );
    expect(messages.every((m) => m.publishedAt === null)).toBe(true);
    expect(messages[0]?.payload).toMatchObject({ v: 1, type: "session.deleted" });
    // The published rows went, except the recent one.
    expect(await p.outboxMessage.count({ where: { publishedAt: { not: null } } })).toBe(1);

    // Erased with every row: nothing anywhere refers to a missing session or child.
    const leftOf = await rowsOf(database.url, pastGrace);
    expect(leftOf).toMatchObject({ audit_log: 1 });
    expect(Object.entries(leftOf).filter(([t, n]) => t !== "audit_log" && n > 0)).toEqual([]);
    const found = await orphans(database.url);
    expect(Object.keys(found)).toContain("notification_deliveries.session_id");
    expect(Object.keys(found)).toContain("chat_user_messages.chat_id");
    expect(Object.entries(found).filter(([, n]) => n > 0)).toEqual([]);
    // What was learned from the two erased sessions stays, without its source.
    const memories = await p.investigationMemory.findMany({ select: { sourceSessionId: true } });
    expect(memories.filter((m) => m.sourceSessionId === null)).toHaveLength(2);
    expect(memories.map((m) => m.sourceSessionId).sort()).toEqual(
      [null, null, justInside, withinGrace].sort(),
    );
    // Sessions kept keep their rows.
    expect((await rowsOf(database.url, withinGrace)).stages).toBe(1);
    expect((await rowsOf(database.url, justInside)).notification_deliveries).toBe(1);

    // A second run finds nothing more.
    expect(await runRetention(p, cutoffs(retention, grace))).toEqual({
      ran: true,
      softDeleted: 0,
      hardDeleted: 0,
      outboxPurged: 0,
    });
  });

  test("one run at a time: a replica that cannot take the lock skips the round", async ({
    db,
    database,
  }) => {
    const other = createDb({ url: database.url, poolSize: 3 });
    try {
      const old = await sessionAt(db.prisma, "completed", 400 * DAY);
      // Replica A's run is held inside its lock (its soft-delete callback waits) while
      // replica B, on its own pool, tries.
      let release!: () => void;
      const released = new Promise<void>((r) => {
        release = r;
      });
      let entered!: () => void;
      const inside = new Promise<void>((r) => {
        entered = r;
      });
      const runA = runRetention(db.prisma, cutoffs(DAY, DAY), {
        onSoftDeleted: async () => {
          entered();
          await released;
        },
      });
      await inside;
      expect(await runRetention(other.prisma, cutoffs(DAY, DAY))).toEqual({
        ran: false,
        reason: "locked",
      });
      release();
      expect(await runA).toMatchObject({ ran: true, softDeleted: 1 });
      expect(
        (await db.prisma.alertSession.findUniqueOrThrow({ where: { id: old } })).deletedAt,
      ).not.toBeNull();
      // Once A is done, B runs.
      expect(await runRetention(other.prisma, cutoffs(DAY, DAY))).toMatchObject({ ran: true });

      // Whoever holds the key (here a plain connection), every replica skips.
      const runs = await withSql(database.url, async (sql) => {
        await sql`SELECT pg_advisory_lock(${RETENTION_LOCK_KEY})`;
        const attempts = await Promise.all(
          [db.prisma, other.prisma, db.prisma].map((p) => runRetention(p, cutoffs(DAY, DAY))),
        );
        await sql`SELECT pg_advisory_unlock(${RETENTION_LOCK_KEY})`;
        return attempts;
      });
      expect(runs.map((r) => r.ran)).toEqual([false, false, false]);
    } finally {
      await other.close();
    }
  });
});
