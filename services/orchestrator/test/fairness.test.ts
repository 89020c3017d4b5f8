import type { Db } from "@tarsy/db";
import { getSession, listActiveSessions } from "@tarsy/db";
import { countStoredRows, insertSessionRows } from "@tarsy/db/testing";
import { until } from "@tarsy/testkit";
import { describe, expect } from "vitest";
import {
  stackTest as it,
  runnerPeer,
  simpleChainConfig,
  startTestOrchestrator,
  submit,
} from "./harness.ts";

const config = (maxConcurrent: number) =>
  simpleChainConfig({
    queue: { max_concurrent_sessions: maxConcurrent, session_timeout: "60s" },
    alertTypes: ["storm-a", "storm-b", "lone-b"],
  });

/** `count` pending sessions of one type created `minutesAgo` minutes ago, inserted in one statement. */
async function storm(db: Db, alertType: string, count: number, minutesAgo: number) {
  await insertSessionRows(db.prisma, {
    count,
    alertData: '{"alert":"storm"}',
    alertType,
    chainId: "simple",
    ageMs: minutesAgo * 60_000,
  });
}

async function typeOfSession(db: Db, id: string) {
  const session = await getSession(db.prisma, id);
  if (!session) throw new Error(`session ${id} not found`);
  return session.alertType;
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
    await until(async () => peer.held.length === 2, {
      what: "two storm sessions to run",
      timeoutMs: 15_000,
    });
    const lone = await submit(t.db, "lone-b", "simple");
    // Its submission was handled (an admission pass ran) and found no free slot.
    await until(async () => (await countStoredRows(t.db.prisma)).unpublishedOutbox === 0, {
      what: "the submission to be published",
      timeoutMs: 5_000,
    });
    await orchestrators[0]?.sweep();
    await orchestrators[0]?.sweep();
    expect(peer.held.map((r) => r.session_id)).not.toContain(lone);

    expect(await peer.releaseOldest(() => done)).toBe(true);
    await until(async () => peer.held.length === 2, {
      what: "the freed slot to be taken",
      timeoutMs: 15_000,
    });
    const third = peer.requests.filter((r) => r.kind === "investigation")[2];
    expect(third?.session_id).toBe(lone);
    const { active } = await listActiveSessions(t.db.prisma);
    const running = new Map<string, number>();
    for (const s of active) running.set(s.alertType, (running.get(s.alertType) ?? 0) + 1);
    expect([...running].sort()).toEqual([
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
      await until(async () => investigations().length === n, {
        what: `admission ${n}`,
        timeoutMs: 15_000,
      });
      expect(await peer.releaseOldest(() => done)).toBe(true);
    }
    const order: string[] = [];
    for (const r of investigations().slice(0, 6))
      order.push(await typeOfSession(t.db, r.session_id));
    expect(order).toEqual(["storm-a", "storm-b", "storm-a", "storm-b", "storm-a", "storm-b"]);
    await peer.stop();
  });
});
