import { RUNNING_SESSION_STATUSES } from "@tarsy/contracts";
import type { Db } from "@tarsy/db";
import { describe, expect } from "vitest";
import {
  stackTest as it,
  runnerPeer,
  simpleChainConfig,
  startTestOrchestrator,
  submit,
  waitFor,
} from "./harness.ts";

const config = (maxConcurrent: number) =>
  simpleChainConfig({
    queue: { max_concurrent_sessions: maxConcurrent, session_timeout: "60s" },
    alertTypes: ["storm-a", "storm-b", "lone-b"],
  });

/** `count` pending sessions of one type created `minutesAgo` minutes ago, inserted in one statement. */
async function storm(db: Db, alertType: string, count: number, minutesAgo: number) {
  await db.prisma.$executeRaw`
    INSERT INTO alert_sessions (alert_data, alert_type, chain_id, created_at)
    SELECT '{"alert":"storm"}', ${alertType}, 'simple',
           now() - make_interval(mins => ${minutesAgo}::int) + make_interval(secs => i / 1000.0)
    FROM generate_series(1, ${count}::int) AS i`;
}

async function typeOfSession(db: Db, id: string) {
  return (await db.prisma.alertSession.findUniqueOrThrow({ where: { id } })).alertType;
}

const done = { status: "completed" as const, analysis: "done" };
/** Holds investigations (the running sessions); answers anything else at once. */
const holdInvestigations = (r: { kind: string }) => (r.kind === "investigation" ? "hold" : done);

describe("fair admission under an alert storm (real Postgres and NATS)", () => {
  it("starts a lone alert of another type in the first slot that frees up behind 2,000 pending", async ({
    t,
    nats,
    orchestrators,
  }) => {
    await storm(t.db, "storm-a", 2_000, 10);
    const peer = await runnerPeer(nats.bus, holdInvestigations);
    const cfg = config(2);
    orchestrators.push(await startTestOrchestrator(t.db, nats.bus, cfg, "orch-a"));
    orchestrators.push(
      await startTestOrchestrator(t.db, await nats.connectAnother(), cfg, "orch-b"),
    );
    await waitFor(async () => peer.held.length === 2, 15_000, "two storm sessions to run");
    const lone = await submit(t.db, "lone-b", "simple");
    // Its submission was handled (an admission pass ran) and found no free slot.
    await waitFor(
      async () => (await t.db.prisma.outboxMessage.count({ where: { publishedAt: null } })) === 0,
      5_000,
      "the submission to be published",
    );
    await orchestrators[0]?.sweep();
    await orchestrators[0]?.sweep();
    expect(peer.held.map((r) => r.session_id)).not.toContain(lone);

    expect(await peer.releaseOldest(() => done)).toBe(true);
    await waitFor(async () => peer.held.length === 2, 15_000, "the freed slot to be taken");
    const third = peer.requests.filter((r) => r.kind === "investigation")[2];
    expect(third?.session_id).toBe(lone);
    const running = await t.db.prisma.alertSession.groupBy({
      by: ["alertType"],
      where: { status: { in: [...RUNNING_SESSION_STATUSES] } },
      _count: true,
    });
    expect(running.map((r) => [r.alertType, r._count]).sort()).toEqual([
      ["lone-b", 1],
      ["storm-a", 1],
    ]);
    await peer.stop();
  });

  it("alternates admissions between two storming types", async ({ t, nats, orchestrators }) => {
    // Every storm-a session is older than every storm-b one: FIFO would run all of A first.
    await storm(t.db, "storm-a", 200, 20);
    await storm(t.db, "storm-b", 200, 10);
    const peer = await runnerPeer(nats.bus, holdInvestigations);
    orchestrators.push(await startTestOrchestrator(t.db, nats.bus, config(1), "orch-a"));
    const investigations = () => peer.requests.filter((r) => r.kind === "investigation");
    for (let n = 1; n <= 6; n++) {
      await waitFor(async () => investigations().length === n, 15_000, `admission ${n}`);
      expect(await peer.releaseOldest(() => done)).toBe(true);
    }
    const order: string[] = [];
    for (const r of investigations().slice(0, 6))
      order.push(await typeOfSession(t.db, r.session_id));
    expect(order).toEqual(["storm-a", "storm-b", "storm-a", "storm-b", "storm-a", "storm-b"]);
    await peer.stop();
  });
});
