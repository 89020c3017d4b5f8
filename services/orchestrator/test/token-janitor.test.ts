import { createSession, getSession } from "@tarsy/db";
import { createTestDb } from "@tarsy/testkit";
import { describe, expect, it } from "vitest";
import { startTokenJanitor } from "../src/token-janitor.ts";
import { logger } from "./harness.ts";

describe("the user-token janitor (real Postgres)", () => {
  it("wipes every stored token past its expiry and leaves live ones", async () => {
    const testDb = await createTestDb();
    const janitor = startTokenJanitor(testDb.db.prisma, { intervalMs: 3_600_000, logger });
    try {
      const session = (sealed: string, expiresAt: Date) =>
        createSession(testDb.db.prisma, {
          alertData: "a",
          alertType: "kubernetes",
          chainId: "k8s-chain",
          userToken: { sealed, expiresAt },
        });
      const { session: expired } = await session("v1.expired", new Date(Date.now() - 1_000));
      const { session: live } = await session("v1.live", new Date(Date.now() + 3_600_000));
      expect(await janitor.sweep()).toEqual({ sessions: 1, chatMessages: 0 });
      const wiped = await getSession(testDb.db.prisma, expired.id);
      expect([wiped?.userToken, wiped?.userTokenExpiresAt]).toEqual([null, null]);
      expect((await getSession(testDb.db.prisma, live.id))?.userToken).toBe("v1.live");
      expect(await janitor.sweep()).toEqual({ sessions: 0, chatMessages: 0 });
    } finally {
      await janitor.stop();
      await testDb.cleanup();
    }
  });
});
