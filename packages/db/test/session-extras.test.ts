import { describe, expect } from "vitest";
import {
  addSessionTokenUsage,
  createSession,
  findSessionsByFingerprint,
  getSession,
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
