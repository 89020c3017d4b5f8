import { describe, expect } from "vitest";
import {
  admitPendingSessions,
  countPendingSessions,
  type DbClient,
  transitionSessionStatus,
} from "../src/index.ts";
import { claimNext, newSession } from "./fixtures.ts";
import { dbTest as test } from "./support.ts";

/** `count` pending sessions of one alert type, created `minutesAgo` before now, in one statement. */
async function storm(client: DbClient, alertType: string, count: number, minutesAgo: number) {
  await client.$executeRaw`
    INSERT INTO alert_sessions (alert_data, alert_type, chain_id, created_at)
    SELECT 'storm ' || i, ${alertType}, 'k8s-chain',
           now() - make_interval(mins => ${minutesAgo}::int) + make_interval(secs => i / 1000.0)
    FROM generate_series(1, ${count}::int) AS i`;
}

const typeOf = async (client: DbClient, id: string | undefined) =>
  (await client.alertSession.findUniqueOrThrow({ where: { id: id ?? "" } })).alertType;

describe("fair admission across alert types", () => {
  test("a lone alert of another type is admitted before a storm's older sessions", async ({
    db,
  }) => {
    await storm(db.prisma, "storm-a", 2_000, 10);
    const first = await admitPendingSessions(db.prisma, { podId: "p", maxConcurrent: 2 });
    expect(first.map((s) => s.alertType)).toEqual(["storm-a", "storm-a"]);
    const lone = await newSession(db.prisma, { alertType: "lone-b" });
    expect(await claimNext(db.prisma, { podId: "p", maxConcurrent: 2 })).toBeNull();

    await transitionSessionStatus(db.prisma, first[0]!.id, ["in_progress"], "completed");
    const next = await claimNext(db.prisma, { podId: "p", maxConcurrent: 2 });
    expect(next?.id).toBe(lone.id);
    expect(await countPendingSessions(db.prisma, "storm-a")).toBe(1_998);
    // Then the storm goes on, oldest first.
    await transitionSessionStatus(db.prisma, next!.id, ["in_progress"], "completed");
    const after = await claimNext(db.prisma, { podId: "p", maxConcurrent: 2 });
    const oldest = await db.prisma.alertSession.findFirst({
      where: { alertType: "storm-a", status: "pending" },
      orderBy: { createdAt: "asc" },
    });
    expect(after?.alertType).toBe("storm-a");
    expect(after!.createdAt.getTime()).toBeLessThan(oldest!.createdAt.getTime());
  });

  test("two storming types alternate, one slot at a time and within one pass", async ({ db }) => {
    // All of A is older than all of B: FIFO would admit 30 A's first.
    await storm(db.prisma, "storm-a", 30, 20);
    await storm(db.prisma, "storm-b", 30, 10);
    const order: string[] = [];
    for (let i = 0; i < 8; i++) {
      const s = await claimNext(db.prisma, { podId: "p", maxConcurrent: 1 });
      expect(s).not.toBeNull();
      order.push(s!.alertType);
      await transitionSessionStatus(db.prisma, s!.id, ["in_progress"], "completed");
    }
    expect(order).toEqual([
      "storm-a",
      "storm-b",
      "storm-a",
      "storm-b",
      "storm-a",
      "storm-b",
      "storm-a",
      "storm-b",
    ]);

    const pass = await admitPendingSessions(db.prisma, { podId: "p", maxConcurrent: 6 });
    expect(pass.map((s) => s.alertType).sort()).toEqual([
      ...Array(3).fill("storm-a"),
      ...Array(3).fill("storm-b"),
    ]);
    expect(await typeOf(db.prisma, pass[1]?.id)).not.toBe(await typeOf(db.prisma, pass[0]?.id));
  });

  test("admission of 2,000 pending sessions stays fast", async ({ db }) => {
    await storm(db.prisma, "storm-a", 2_000, 10);
    for (let t = 0; t < 20; t++) await newSession(db.prisma, { alertType: `type-${t}` });
    const started = performance.now();
    const admitted = await admitPendingSessions(db.prisma, { podId: "p", maxConcurrent: 21 });
    const elapsed = performance.now() - started;
    expect(new Set(admitted.map((s) => s.alertType)).size).toBe(21);
    expect(elapsed).toBeLessThan(5_000);
  });
});
