import { describe, expect } from "vitest";
import {
  addSessionTokenUsage,
  claimSessionRunbook,
  createSession,
  findSessionsByFingerprint,
  getSession,
  getSessionRunbook,
  listSessions,
  softDeleteSessionsBefore,
  transitionSessionStatus,
  updateSessionProgress,
} from "../src/index.ts";
import { newSession } from "./fixtures.ts";
import { dbTest as test } from "./support.ts";

describe("session bookkeeping", () => {
  test("token usage from parallel executions adds up", async ({ db }) => {
    const session = await newSession(db.prisma);
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        addSessionTokenUsage(db.prisma, session.id, {
          inputTokens: 100,
          outputTokens: 10,
          thinkingTokens: i,
          totalTokens: 110,
        }),
      ),
    );
    const after = await getSession(db.prisma, session.id);
    expect([
      after?.inputTokens,
      after?.outputTokens,
      after?.thinkingTokens,
      after?.totalTokens,
    ]).toEqual([1000, 100, 45, 1100]);
  });

  test("progress shows the running stage", async ({ db }) => {
    const session = await newSession(db.prisma);
    await updateSessionProgress(db.prisma, session.id, 2, "analysis");
    const after = await getSession(db.prisma, session.id);
    expect([after?.currentStageIndex, after?.currentStageName]).toEqual([2, "analysis"]);
    expect(after?.lastInteractionAt).toBeInstanceOf(Date);
  });

  test("Alertmanager alerts are found by fingerprint", async ({ db }) => {
    const labels = { alertname: "KubePodCrashLooping", namespace: "payments" };
    const { session: firing } = await createSession(db.prisma, {
      alertData: "{}",
      alertType: "kubernetes",
      chainId: "k8s",
      alertFingerprint: "abc123",
      alertGroupKey: '{}:{alertname="KubePodCrashLooping"}',
      alertLabels: labels,
    });
    await newSession(db.prisma);
    expect((await findSessionsByFingerprint(db.prisma, "abc123")).map((s) => s.id)).toEqual([
      firing.id,
    ]);
    expect(await findSessionsByFingerprint(db.prisma, "abc123", ["completed"])).toEqual([]);
    expect((await getSession(db.prisma, firing.id))?.alertLabels).toEqual(labels);
    expect(
      (await listSessions(db.prisma, { alertFingerprint: "abc123" })).items.map((s) => s.id),
    ).toEqual([firing.id]);
  });

  test("retention soft-deletes only terminal sessions completed before the cutoff", async ({
    db,
  }) => {
    const old = await newSession(db.prisma);
    const recent = await newSession(db.prisma);
    const running = await newSession(db.prisma);
    const day = 24 * 3600_000;
    await transitionSessionStatus(db.prisma, old.id, ["pending"], "completed", {
      completedAt: new Date(Date.now() - 100 * day),
    });
    await transitionSessionStatus(db.prisma, recent.id, ["pending"], "failed", {
      completedAt: new Date(Date.now() - day),
    });
    await transitionSessionStatus(db.prisma, running.id, ["pending"], "in_progress");
    expect(await softDeleteSessionsBefore(db.prisma, new Date(Date.now() - 90 * day))).toBe(1);
    expect((await listSessions(db.prisma)).items.map((s) => s.id).sort()).toEqual(
      [recent.id, running.id].sort(),
    );
  });
});

describe("session runbook", () => {
  test("is stored once: the first claim wins, later claims get the stored text", async ({ db }) => {
    const session = await newSession(db.prisma);
    expect(await getSessionRunbook(db.prisma, session.id)).toBeNull();
    const claims = await Promise.all(
      ["text A", "text B", "text C"].map((content) =>
        claimSessionRunbook(db.prisma, session.id, { content, source: "fetched", error: null }),
      ),
    );
    expect(claims.filter((c) => c.claimed)).toHaveLength(1);
    const texts = new Set(claims.map((c) => c.runbook.content));
    expect(texts.size).toBe(1);
    const stored = await getSessionRunbook(db.prisma, session.id);
    expect(stored?.content).toBe([...texts][0]);
    expect(stored?.source).toBe("fetched");

    const late = await claimSessionRunbook(db.prisma, session.id, {
      content: "fallback",
      source: "default",
      error: "fetch failed",
    });
    expect(late.claimed).toBe(false);
    expect(late.runbook.content).toBe(stored?.content);
  });

  test("keeps the fallback reason and a missing text", async ({ db }) => {
    const session = await newSession(db.prisma);
    const { runbook } = await claimSessionRunbook(db.prisma, session.id, {
      content: null,
      source: "none",
      error: "GET … answered 404",
    });
    expect(runbook).toMatchObject({ content: null, source: "none", error: "GET … answered 404" });
    expect(await getSessionRunbook(db.prisma, session.id)).toMatchObject({ source: "none" });
  });
});
