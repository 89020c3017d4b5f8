import { ACTIVE_SESSION_STATUSES } from "@tarsy/contracts";
import { describe, expect } from "vitest";
import {
  claimSessionRunbook,
  createSession,
  ensureExecutiveSummaryExecution,
  ensureStage,
  findDuplicateAlertSession,
  getSession,
  getSessionRunbook,
  markAlertResolved,
  refreshSessionTokens,
  transitionExecutionStatus,
  transitionSessionStatus,
  updateSessionProgress,
} from "../src/index.ts";
import { newSession } from "./fixtures.ts";
import { dbTest as test } from "./support.ts";

describe("session bookkeeping", () => {
  test("token totals are the sum of the session's executions, however often refreshed", async ({
    db,
  }) => {
    const session = await newSession(db.prisma);
    const { executions } = await ensureStage(
      db.prisma,
      { sessionId: session.id, stageName: "s", stageIndex: 1 },
      Array.from({ length: 3 }, (_, i) => ({ agentName: `a${i}`, agentIndex: i + 1 })),
    );
    const { execution: summary } = await ensureExecutiveSummaryExecution(db.prisma, session.id, {
      agentName: "ExecutiveSummary",
    });
    for (const [i, e] of [...executions, summary].entries()) {
      await transitionExecutionStatus(db.prisma, e.id, ["pending"], "completed", {
        inputTokens: 100,
        outputTokens: 10,
        thinkingTokens: i,
        totalTokens: 110,
      });
    }
    await Promise.all([1, 2, 3].map(() => refreshSessionTokens(db.prisma, session.id)));
    const after = await getSession(db.prisma, session.id);
    expect([
      after?.inputTokens,
      after?.outputTokens,
      after?.thinkingTokens,
      after?.totalTokens,
    ]).toEqual([400, 40, 6, 440]);
  });

  test("progress shows the running stage", async ({ db }) => {
    const session = await newSession(db.prisma);
    await updateSessionProgress(db.prisma, session.id, 2, "analysis");
    const after = await getSession(db.prisma, session.id);
    expect([after?.currentStageIndex, after?.currentStageName]).toEqual([2, "analysis"]);
    expect(after?.lastInteractionAt).toBeInstanceOf(Date);
  });

  test("Alertmanager alerts are matched by fingerprint or group, and resolved once", async ({
    db,
  }) => {
    const labels = { alertname: "KubePodCrashLooping", namespace: "payments" };
    const groupKey = '{}:{alertname="KubePodCrashLooping"}';
    const { session: firing } = await createSession(db.prisma, {
      project: "default",
      alertData: "{}",
      alertType: "kubernetes",
      chainId: "k8s",
      alertFingerprint: "abc123",
      alertGroupKey: groupKey,
      alertLabels: labels,
    });
    await newSession(db.prisma);
    const since = new Date(Date.now() - 60_000);
    const open = ACTIVE_SESSION_STATUSES;
    const match = { alertFingerprint: "abc123" };
    expect(await findDuplicateAlertSession(db.prisma, match, open, since)).toBe(firing.id);
    expect(
      await findDuplicateAlertSession(db.prisma, { alertGroupKey: groupKey }, open, since),
    ).toBe(firing.id);
    expect(
      await findDuplicateAlertSession(db.prisma, { alertFingerprint: "other" }, open, since),
    ).toBeNull();
    // Completed: a duplicate only within the window.
    await transitionSessionStatus(db.prisma, firing.id, ["pending"], "completed");
    expect(await findDuplicateAlertSession(db.prisma, match, open, since)).toBe(firing.id);
    expect(
      await findDuplicateAlertSession(db.prisma, match, open, new Date(Date.now() + 1000)),
    ).toBeNull();
    expect((await getSession(db.prisma, firing.id))?.alertLabels).toEqual(labels);

    const first = new Date("2026-01-01T00:00:00Z");
    expect(await markAlertResolved(db.prisma, match, first)).toBe(firing.id);
    expect(await markAlertResolved(db.prisma, match, new Date())).toBe(firing.id);
    expect((await getSession(db.prisma, firing.id))?.alertResolvedAt).toEqual(first);
    expect(await markAlertResolved(db.prisma, { alertFingerprint: "other" }, first)).toBeNull();
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
