import { createSession, getChatUserMessage, getSession, submitChatMessage } from "@tarsy/db";
import { forceSessionStatus } from "@tarsy/db/testing";
import { createMetrics, type OpsServer, type ServiceMetrics, startOpsServer } from "@tarsy/metrics";
import { createTestDb, type TestDb } from "@tarsy/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startTokenJanitor } from "../src/token-janitor.ts";
import { logger } from "./harness.ts";

const inAnHour = () => new Date(Date.now() + 3_600_000);
const aSecondAgo = () => new Date(Date.now() - 1_000);

describe("the user-token janitor (real Postgres)", () => {
  let testDb: TestDb;
  let ops: OpsServer;
  let metrics: ServiceMetrics<"orchestrator">;

  beforeEach(async () => {
    testDb = await createTestDb();
    metrics = createMetrics("orchestrator", { processMetrics: false });
    ops = await startOpsServer({
      host: "127.0.0.1",
      port: 0,
      registry: metrics.registry,
      logger,
      ready: {},
    });
  });
  afterEach(async () => {
    await ops?.close();
    await testDb?.cleanup();
  });

  const session = async (sealed: string, expiresAt: Date) =>
    (
      await createSession(testDb.db.prisma, {
        project: "default",
        alertData: "a",
        alertType: "kubernetes",
        chainId: "k8s-chain",
        userToken: { sealed, expiresAt },
      })
    ).session;

  /** A chat question on a finished session, its token sealed with it. */
  const chatMessage = async (sealed: string, expiresAt: Date) => {
    const finished = await session("v1.none", inAnHour());
    await forceSessionStatus(testDb.db.prisma, finished.id, "completed");
    const submitted = await submitChatMessage(testDb.db.prisma, {
      sessionId: finished.id,
      author: "alice",
      content: "why?",
      userToken: { sealed, expiresAt },
    });
    return submitted.message;
  };

  /** `tarsy_user_tokens_wiped_total{holder}` as Prometheus scrapes it; undefined when absent. */
  const scraped = async (holder: "session" | "chat_message"): Promise<number | undefined> => {
    const response = await fetch(`${ops.url}/metrics`);
    expect(response.status).toBe(200);
    const line = (await response.text())
      .split("\n")
      .find(
        (l) =>
          l.startsWith("tarsy_user_tokens_wiped_total{") &&
          l.includes(`holder="${holder}"`) &&
          l.includes('service="orchestrator"'),
      );
    return line === undefined ? undefined : Number(line.split(" ").at(-1));
  };

  it("wipes every stored token past its expiry, leaves live ones, and counts what each sweep wiped", async () => {
    const janitor = startTokenJanitor(testDb.db.prisma, {
      intervalMs: 3_600_000,
      logger,
      metrics,
    });
    try {
      // Both series are there (at 0) before anything is wiped.
      expect([await scraped("session"), await scraped("chat_message")]).toEqual([0, 0]);

      const expired = await session("v1.expired", aSecondAgo());
      await session("v1.expired-too", aSecondAgo());
      const live = await session("v1.live", inAnHour());
      const question = await chatMessage("v1.chat-expired", aSecondAgo());
      expect(await janitor.sweep()).toEqual({ sessions: 2, chatMessages: 1 });
      const wiped = await getSession(testDb.db.prisma, expired.id);
      expect([wiped?.userToken, wiped?.userTokenExpiresAt]).toEqual([null, null]);
      expect((await getSession(testDb.db.prisma, live.id))?.userToken).toBe("v1.live");
      expect((await getChatUserMessage(testDb.db.prisma, question.id))?.userToken).toBeNull();
      expect([await scraped("session"), await scraped("chat_message")]).toEqual([2, 1]);

      // Nothing left to wipe: the counts stay.
      expect(await janitor.sweep()).toEqual({ sessions: 0, chatMessages: 0 });
      expect([await scraped("session"), await scraped("chat_message")]).toEqual([2, 1]);

      // The next expired token adds to them.
      await chatMessage("v1.chat-expired-later", aSecondAgo());
      expect(await janitor.sweep()).toEqual({ sessions: 0, chatMessages: 1 });
      expect([await scraped("session"), await scraped("chat_message")]).toEqual([2, 2]);
    } finally {
      await janitor.stop();
    }
  });

  it("counts what the sweeps on its interval wipe", async () => {
    await session("v1.expired", aSecondAgo());
    const janitor = startTokenJanitor(testDb.db.prisma, { intervalMs: 50, logger, metrics });
    try {
      const deadline = Date.now() + 10_000;
      while ((await scraped("session")) !== 1) {
        if (Date.now() > deadline) throw new Error("no sweep on the interval counted the token");
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(await scraped("chat_message")).toBe(0);
    } finally {
      await janitor.stop();
    }
  });
});
