import { describe, expect } from "vitest";
import {
  applyFeedbackReflection,
  applyReviewAction,
  createMemories,
  type DbClient,
  FEEDBACK_CONFIDENCE,
  feedbackReflectionKey,
  getMemory,
  listFeedbackReflections,
  sessionMemories,
} from "../src/index.ts";
import { completedSession } from "./fixtures.ts";
import { dbTest as test } from "./support.ts";

async function reviewable(client: DbClient) {
  const session = await completedSession(client);
  await client.alertSession.update({
    where: { id: session.id },
    data: { reviewStatus: "needs_review" },
  });
  return session;
}

const queued = (client: DbClient) =>
  client.outboxMessage.findMany({
    where: { messageKey: "feedbackSubmitted" },
    orderBy: { id: "asc" },
  });

describe("feedback reflections", () => {
  test("the key is the session and the trimmed text: the same feedback is one reflection", () => {
    const id = "0b7c9d2e-8f5a-4c1b-9e3d-2a6f8b4c0d1e";
    expect(feedbackReflectionKey(id, "Check the limits.")).toBe(
      feedbackReflectionKey(id.toUpperCase(), "  Check the limits.\n"),
    );
    expect(feedbackReflectionKey(id, "Check the limits.")).toMatch(/^[0-9a-f]{64}$/);
    expect(feedbackReflectionKey(id, "Check the limits.")).not.toBe(
      feedbackReflectionKey(id, "Check the requests."),
    );
    expect(feedbackReflectionKey(id, "x")).not.toBe(
      feedbackReflectionKey("1b7c9d2e-8f5a-4c1b-9e3d-2a6f8b4c0d1e", "x"),
    );
  });

  test("a completed review with feedback asks once per text; update_feedback with a new text asks again", async ({
    db,
  }) => {
    const p = db.prisma;
    const session = await reviewable(p);
    const complete = await applyReviewAction(p, session.id, {
      action: "complete",
      actor: "alice",
      qualityRating: "partially_accurate",
      investigationFeedback: "  Missed the resource limits.  ",
      reflectFeedback: true,
    });
    expect(complete.outcome).toBe("applied");
    if (complete.outcome !== "applied") return;
    expect(complete.feedbackReflection?.key).toBe("feedbackSubmitted");

    // The same text again (a repeated complete, an update that changes only the rating).
    await applyReviewAction(p, session.id, {
      action: "complete",
      actor: "alice",
      qualityRating: "partially_accurate",
      investigationFeedback: "Missed the resource limits.",
      reflectFeedback: true,
    });
    const same = await applyReviewAction(p, session.id, {
      action: "update_feedback",
      actor: "bob",
      qualityRating: "accurate",
      reflectFeedback: true,
    });
    expect(same.outcome === "applied" && same.feedbackReflection).toBe(null);

    await applyReviewAction(p, session.id, {
      action: "update_feedback",
      actor: "bob",
      investigationFeedback: "Also check the node's memory pressure.",
      reflectFeedback: true,
    });
    const rows = await listFeedbackReflections(p, session.id);
    expect(rows.map((r) => [r.feedback, r.qualityRating, r.actor, r.status])).toEqual([
      ["Missed the resource limits.", "partially_accurate", "alice", "pending"],
      ["Also check the node's memory pressure.", "accurate", "bob", "pending"],
    ]);
    const messages = await queued(p);
    expect(messages.map((m) => (m.payload as { reflection_id: string }).reflection_id)).toEqual(
      rows.map((r) => r.id),
    );
  });

  test("nothing is asked without feedback, for other actions, or with memory off", async ({
    db,
  }) => {
    const p = db.prisma;
    const off = await reviewable(p);
    await applyReviewAction(p, off.id, {
      action: "complete",
      actor: "alice",
      investigationFeedback: "Good work.",
      reflectFeedback: false,
    });
    const blank = await reviewable(p);
    await applyReviewAction(p, blank.id, {
      action: "complete",
      actor: "alice",
      qualityRating: "accurate",
      investigationFeedback: "   ",
      reflectFeedback: true,
    });
    const claimed = await reviewable(p);
    await applyReviewAction(p, claimed.id, { action: "claim", actor: "alice" });
    expect(await queued(p)).toEqual([]);
    expect(await p.memoryFeedbackReflection.count()).toBe(0);
  });

  test("the reflection's memories are written once, at 0.9, from the session, whatever retries", async ({
    db,
  }) => {
    const p = db.prisma;
    const session = await reviewable(p);
    const scope = {
      project: "default",
      sourceSessionId: session.id,
      alertType: "PodCrash",
      chainId: "k8s",
    };
    const [old, wrong] = await createMemories(p, scope, [
      {
        content: "OOM kills need memory metrics",
        category: "procedural",
        valence: "positive",
        confidence: 0.5,
        embedding: [],
        embeddingModel: null,
      },
      {
        content: "Limits never matter",
        category: "semantic",
        valence: "neutral",
        confidence: 0.7,
        embedding: [],
        embeddingModel: null,
      },
    ]);
    await applyReviewAction(p, session.id, {
      action: "complete",
      actor: "alice",
      investigationFeedback: "Check the limits first.",
      reflectFeedback: true,
    });
    const [reflection] = await listFeedbackReflections(p, session.id);
    const changes = {
      create: [
        {
          content: "Check Kubernetes resource limits before diagnosing an OOM kill",
          category: "procedural" as const,
          valence: "positive" as const,
          embedding: [],
          embeddingModel: null,
        },
      ],
      reinforce: [old?.id ?? ""],
      deprecate: [wrong?.id ?? ""],
    };
    const first = await applyFeedbackReflection(p, reflection?.id ?? "", scope, changes);
    expect([first.applied, first.created.length, first.reinforced, first.deprecated]).toEqual([
      true,
      1,
      1,
      1,
    ]);
    // A redelivered execution answers the same: nothing is written again.
    const again = await applyFeedbackReflection(p, reflection?.id ?? "", scope, changes);
    expect([again.applied, again.created.length, again.reinforced, again.deprecated]).toEqual([
      false,
      0,
      1,
      1,
    ]);
    const learned = await sessionMemories(p, session.id);
    expect(learned.map((m) => [m.content, m.confidence, m.deprecated])).toEqual([
      ["OOM kills need memory metrics", expect.closeTo(0.55, 6), false],
      ["Limits never matter", 0.7, true],
      [
        "Check Kubernetes resource limits before diagnosing an OOM kill",
        FEEDBACK_CONFIDENCE,
        false,
      ],
    ]);
    expect((await getMemory(p, old?.id ?? ""))?.seenCount).toBe(2);
    const [done] = await listFeedbackReflections(p, session.id);
    expect(done?.appliedAt).not.toBeNull();
    expect([done?.memoriesCreated, done?.memoriesReinforced, done?.memoriesDeprecated]).toEqual([
      1, 1, 1,
    ]);
  });
});
