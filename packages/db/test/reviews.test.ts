/**
 * Review actions are a compare-and-swap: the state a session was read in is the condition of
 * its UPDATE. Here another transaction claims the row after the action has read it and before
 * its write lands (the write waits on that transaction's row lock): the action must report the
 * conflict and change nothing, however the database orders the two.
 */
import { describe, expect } from "vitest";
import { applyReviewAction, getSession, listReviewActivity } from "../src/index.ts";
import { completedSession } from "./fixtures.ts";
import { dbTest as test, withSql } from "./support.ts";

describe("review actions", () => {
  test("a claim whose session another reviewer claimed between its read and its write is a conflict, and changes nothing", async ({
    db,
    database,
  }) => {
    const session = await completedSession(db.prisma);
    expect((await getSession(db.prisma, session.id))?.reviewStatus).toBe("needs_review");
    const eventsBefore = await db.prisma.outboxMessage.count({
      where: { messageKey: "reviewStatus" },
    });

    await withSql(database.url, async (sql) => {
      const bob = await sql.reserve();
      try {
        // Bob's claim, not yet committed: alice's read still sees needs_review, her write waits.
        await bob`BEGIN`;
        await bob`UPDATE alert_sessions
          SET review_status = 'in_progress', assignee = 'bob@example.com', assigned_at = now()
          WHERE id = ${session.id}`;
        const alice = applyReviewAction(db.prisma, session.id, {
          action: "claim",
          actor: "alice@example.com",
        });
        // Wait until alice's UPDATE is blocked on bob's row lock: she has read the row by then.
        const deadline = Date.now() + 10_000;
        for (;;) {
          const [waiting] = await sql<{ n: number }[]>`
            SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock'
              AND query ILIKE 'UPDATE%alert_sessions%'`;
          if ((waiting?.n ?? 0) > 0) break;
          if (Date.now() > deadline) throw new Error("alice's update never waited on bob's lock");
          await new Promise((r) => setTimeout(r, 10));
        }
        await bob`COMMIT`;

        expect(await alice).toEqual({
          outcome: "conflict",
          reviewStatus: "in_progress",
          assignee: "bob@example.com",
          message: "the session changed meanwhile (now in_progress, bob@example.com)",
        });
      } finally {
        bob.release();
      }
    });

    // Bob's claim stands; alice left no activity row and announced nothing.
    const after = await getSession(db.prisma, session.id);
    expect([after?.reviewStatus, after?.assignee]).toEqual(["in_progress", "bob@example.com"]);
    expect(await listReviewActivity(db.prisma, session.id)).toEqual([]);
    expect(await db.prisma.outboxMessage.count({ where: { messageKey: "reviewStatus" } })).toBe(
      eventsBefore,
    );
  });
});
