import { describe, expect } from "vitest";
import {
  createSession,
  ensureStage,
  getSessionDetail,
  getSessionStats,
  listActiveSessions,
  listSessions,
  type PrismaClient,
  recordLLMInteraction,
  recordMCPInteraction,
} from "../src/index.ts";
import { dbTest as test } from "./support.ts";

/** A client that counts every query it sends (model operations and raw SQL alike). */
function counting(prisma: PrismaClient) {
  const counter = { queries: 0 };
  const client = prisma.$extends({
    query: {
      async $allOperations({ args, query }) {
        counter.queries++;
        return query(args);
      },
    },
  }) as unknown as PrismaClient;
  return { client, counter };
}

async function seed(prisma: PrismaClient, n: number) {
  for (let i = 0; i < n; i++) {
    const { session } = await createSession(prisma, {
      project: "default",
      alertData: `alert ${i}`,
      alertType: "kubernetes",
      chainId: "k8s-chain",
    });
    const { stage, executions } = await ensureStage(
      prisma,
      { sessionId: session.id, stageName: "investigate", stageIndex: 1, parallelType: "replica" },
      [{ agentName: "A", agentIndex: 1 }],
    );
    const ref = { sessionId: session.id, stageId: stage.id, executionId: executions[0]?.id };
    await recordLLMInteraction(prisma, {
      ...ref,
      interactionType: "iteration",
      modelName: "m",
      inputTokens: i,
      outputTokens: 1,
      totalTokens: i + 1,
    });
    await recordMCPInteraction(prisma, { ...ref, interactionType: "tool_call", serverName: "k" });
  }
}

describe("session aggregates", () => {
  test("a page costs the same fixed number of queries whatever its size (no N+1)", async ({
    db,
  }) => {
    await seed(db.prisma, 2);
    const small = counting(db.prisma);
    const page2 = await listSessions(small.client, { pageSize: 2 });
    expect(page2.items).toHaveLength(2);

    await seed(db.prisma, 18);
    const large = counting(db.prisma);
    const page20 = await listSessions(large.client, { pageSize: 20 });
    expect(page20.items).toHaveLength(20);
    expect(large.counter.queries).toBe(small.counter.queries);
    expect(large.counter.queries).toBe(3); // the page, the total, the aggregates

    // Each session's own numbers, not a mix.
    for (const s of page20.items) {
      const i = Number(s.alertData.split(" ")[1]);
      expect(page20.stats.get(s.id)).toEqual({
        llmInteractionCount: 1,
        mcpInteractionCount: 1,
        inputTokens: i,
        outputTokens: 1,
        totalTokens: i + 1,
        cost: { interactions: 1, priced: 0, usd: 0 },
        totalStages: 1,
        completedStages: 0,
        failedStages: 0,
        hasParallelStages: true,
        hasActionStages: false,
        chatMessageCount: 0,
        latestScore: null,
        scoringStatus: null,
      });
    }

    const active = counting(db.prisma);
    const { queued, stats } = await listActiveSessions(active.client);
    expect(queued).toHaveLength(20);
    expect(stats.size).toBe(20);
    expect(active.counter.queries).toBe(3); // active, queued, the aggregates

    const detail = counting(db.prisma);
    const found = await getSessionDetail(detail.client, page20.items[0]?.id ?? "");
    expect(found?.stats.llmInteractionCount).toBe(1);
    expect(detail.counter.queries).toBeLessThanOrEqual(5);
  });

  test("latest_score is the newest completed score; scoring_status the newest run's", async ({
    db,
  }) => {
    const [scored = "", rescoring = "", failed = ""] = await Promise.all(
      ["a", "b", "c"].map(async (t) => {
        const { session } = await createSession(db.prisma, {
          project: "default",
          alertData: t,
          alertType: "kubernetes",
          chainId: "k8s-chain",
        });
        return session.id;
      }),
    );
    const at = (minute: number) => new Date(Date.UTC(2026, 10, 26, 12, minute));
    const score = (sessionId: string, minute: number, status: string, totalScore: number | null) =>
      db.prisma.sessionScore.create({
        data: {
          sessionId,
          status: status as "completed",
          totalScore,
          promptHash: "h",
          scoreTriggeredBy: "auto",
          startedAt: at(minute),
          completedAt: status === "in_progress" ? null : at(minute + 1),
        },
      });
    await score(scored, 1, "completed", 40);
    await score(scored, 5, "completed", 80);
    await score(rescoring, 1, "completed", 65);
    await score(rescoring, 5, "in_progress", null);
    await score(failed, 1, "failed", null);
    const stats = await getSessionStats(db.prisma, [scored, rescoring, failed]);
    expect(stats.get(scored)).toMatchObject({ latestScore: 80, scoringStatus: "completed" });
    // A re-score running: the last completed score stays shown, the status says it runs.
    expect(stats.get(rescoring)).toMatchObject({ latestScore: 65, scoringStatus: "in_progress" });
    expect(stats.get(failed)).toMatchObject({ latestScore: null, scoringStatus: "failed" });
  });

  test("unknown ids get zeros and an empty list asks nothing", async ({ db }) => {
    const unknown = "00000000-0000-4000-8000-000000000000";
    const stats = await getSessionStats(db.prisma, [unknown]);
    expect(stats.get(unknown)).toMatchObject({ llmInteractionCount: 0, totalStages: 0 });
    const none = counting(db.prisma);
    expect((await getSessionStats(none.client, [])).size).toBe(0);
    expect(none.counter.queries).toBe(0);
  });
});
