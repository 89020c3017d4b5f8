import type { Bus } from "@tarsy/bus";
import {
  type ReviewStatusEvent,
  SESSIONS_EVENTS_SUBJECT,
  sessionEventsSubject,
  TERMINAL_SESSION_STATUSES,
} from "@tarsy/contracts";
import { applyReviewAction, type Db, getSession, initializeReview } from "@tarsy/db";
import { until } from "@tarsy/testkit";
import { describe, expect } from "vitest";
import {
  stackTest as it,
  runnerPeer,
  simpleChainConfig,
  startTestOrchestrator,
  submit,
  waitForSession,
} from "./harness.ts";

const config = (queue: Record<string, string | number>) =>
  simpleChainConfig({ queue: { session_timeout: "60s", ...queue } });

/** The `review.status` events of a session stored on both of its channels (equal), once there. */
async function reviewEventsOf(bus: Bus, id: string): Promise<ReviewStatusEvent[]> {
  const read = async (subject: string) =>
    (await bus.replayEvents({ subject, afterSeq: 0, limit: 10_000 })).events
      .map((e) => e.payload)
      .filter((p): p is ReviewStatusEvent => p.type === "review.status" && p.session_id === id);
  return until(
    async () => {
      const [own, all] = await Promise.all([
        read(sessionEventsSubject(id)),
        read(SESSIONS_EVENTS_SUBJECT),
      ]);
      if (own.length === 0 || all.length !== own.length) return null;
      expect(all).toEqual(own);
      return own;
    },
    { what: "review.status on both channels", timeoutMs: 10_000 },
  );
}

async function reviewOf(db: Db, id: string) {
  const s = await getSession(db.prisma, id);
  return {
    review_status: s?.reviewStatus,
    assignee: s?.assignee,
    quality_rating: s?.qualityRating,
    reviewed: s?.reviewedAt !== null,
  };
}

describe("the review state a session starts with when it ends (real Postgres and NATS)", () => {
  it("a completed session needs review, announced once by the system on both channels", async ({
    t,
    nats,
    orchestrators,
  }) => {
    const peer = await runnerPeer(nats.bus, () => ({ status: "completed", analysis: "fine" }));
    orchestrators.push(await startTestOrchestrator(t.db, nats.bus, config({})));
    const id = await submit(t.db, "test-alert", "simple");
    const done = await waitForSession(t.db, id, TERMINAL_SESSION_STATUSES);
    await peer.stop();
    expect(done.status).toBe("completed");
    expect(await reviewOf(t.db, id)).toEqual({
      review_status: "needs_review",
      assignee: null,
      quality_rating: null,
      reviewed: false,
    });
    const events = await reviewEventsOf(nats.bus, id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      review_status: "needs_review",
      assignee: null,
      actor: "system",
    });
    expect(events[0]?.activity_id).toBeUndefined();

    // A second end (a redelivery) never rewrites a review that has begun.
    await applyReviewAction(t.db.prisma, id, { action: "claim", actor: "alice" });
    const again = await initializeReview(t.db.prisma, id, "completed", new Date());
    expect(again).toBe(false);
    expect((await reviewOf(t.db, id)).assignee).toBe("alice");
  });

  it("a failed session needs review too", async ({ t, nats, orchestrators }) => {
    const peer = await runnerPeer(nats.bus, () => ({ status: "failed", error: "no access" }));
    orchestrators.push(await startTestOrchestrator(t.db, nats.bus, config({})));
    const id = await submit(t.db, "test-alert", "simple");
    const done = await waitForSession(t.db, id, TERMINAL_SESSION_STATUSES);
    await peer.stop();
    expect(done.status).toBe("failed");
    expect((await reviewOf(t.db, id)).review_status).toBe("needs_review");
    expect((await reviewEventsOf(nats.bus, id)).map((e) => e.review_status)).toEqual([
      "needs_review",
    ]);
  });

  it("a cancelled running session starts as reviewed, without rating or assignee", async ({
    t,
    nats,
    orchestrators,
  }) => {
    const peer = await runnerPeer(nats.bus, () => "hold");
    orchestrators.push(await startTestOrchestrator(t.db, nats.bus, config({})));
    const id = await submit(t.db, "test-alert", "simple");
    await until(async () => peer.held.length === 1, { what: "first execution", timeoutMs: 10_000 });
    // Still running: no review yet.
    expect((await reviewOf(t.db, id)).review_status).toBeNull();
    await nats.bus.publish("cancelRequested", {
      v: 1,
      session_id: id,
      requested_by: "alice",
      requested_at: new Date().toISOString(),
    });
    await waitForSession(t.db, id, ["cancelled"]);
    await peer.stop();
    expect(await reviewOf(t.db, id)).toEqual({
      review_status: "reviewed",
      assignee: null,
      quality_rating: null,
      reviewed: true,
    });
    const events = await reviewEventsOf(nats.bus, id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      review_status: "reviewed",
      quality_rating: null,
      assignee: null,
      actor: "system",
    });
    expect(events[0]?.reviewed_at).not.toBeNull();
  });

  it("a session cancelled while queued starts as reviewed; one that timed out needs review", async ({
    t,
    nats,
    orchestrators,
  }) => {
    // One slot, held: the second session waits in the queue and is cancelled there.
    const peer = await runnerPeer(nats.bus, () => "hold");
    orchestrators.push(
      await startTestOrchestrator(
        t.db,
        nats.bus,
        config({ max_concurrent_sessions: 1, session_timeout: "2s" }),
      ),
    );
    const first = await submit(t.db, "test-alert", "simple");
    await until(async () => peer.held.length === 1, { what: "first execution", timeoutMs: 10_000 });
    const queued = await submit(t.db, "test-alert", "simple");
    await waitForSession(t.db, queued, ["pending"]);
    await nats.bus.publish("cancelRequested", {
      v: 1,
      session_id: queued,
      requested_by: "bob",
      requested_at: new Date().toISOString(),
    });
    await waitForSession(t.db, queued, ["cancelled"]);
    expect((await reviewOf(t.db, queued)).review_status).toBe("reviewed");
    expect((await reviewEventsOf(nats.bus, queued))[0]).toMatchObject({
      review_status: "reviewed",
      actor: "system",
    });

    await waitForSession(t.db, first, ["timed_out"], 15_000);
    await peer.stop();
    expect((await reviewOf(t.db, first)).review_status).toBe("needs_review");
    expect((await reviewEventsOf(nats.bus, first))[0]).toMatchObject({
      review_status: "needs_review",
      actor: "system",
    });
  });
});
