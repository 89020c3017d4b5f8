import { TERMINAL_SESSION_STATUSES } from "@tarsy/contracts";
import { describe, expect } from "vitest";
import {
  createSession,
  ensureStage,
  getChatUserMessage,
  getExecutionUserToken,
  getSession,
  openChatTurn,
  softDeleteSession,
  submitChatMessage,
  transitionSessionStatus,
  transitionStageStatus,
  wipeExpiredUserTokens,
} from "../src/index.ts";
import { completedSession } from "./fixtures.ts";
import { dbTest as test } from "./support.ts";

const inAnHour = () => new Date(Date.now() + 3_600_000);

describe("users' tokens (sealed by the caller) while sessions and chat turns run", () => {
  test("stored with the session, found by its executions, wiped when it ends", async ({ db }) => {
    for (const end of TERMINAL_SESSION_STATUSES) {
      const { session } = await createSession(db.prisma, {
        project: "default",
        alertData: "a",
        alertType: "kubernetes",
        chainId: "k8s-chain",
        userToken: { sealed: "v1.sealed-session-token", expiresAt: inAnHour() },
      });
      await transitionSessionStatus(db.prisma, session.id, ["pending"], "in_progress");
      const stage = await ensureStage(
        db.prisma,
        { sessionId: session.id, stageName: "investigate", stageIndex: 1 },
        [{ agentName: "KubernetesAgent", agentIndex: 1 }],
      );
      const execution = stage.executions[0];
      if (!execution) throw new Error("no execution");
      expect(await getExecutionUserToken(db.prisma, execution.id)).toBe("v1.sealed-session-token");
      await transitionSessionStatus(db.prisma, session.id, ["in_progress"], end);
      const ended = await getSession(db.prisma, session.id);
      expect([ended?.userToken, ended?.userTokenExpiresAt]).toEqual([null, null]);
      expect(await getExecutionUserToken(db.prisma, execution.id)).toBeNull();
    }
  });

  test("an expired token is never handed out, and the janitor wipes it", async ({ db }) => {
    const { session } = await createSession(db.prisma, {
      project: "default",
      alertData: "a",
      alertType: "kubernetes",
      chainId: "k8s-chain",
      userToken: { sealed: "v1.old", expiresAt: new Date(Date.now() - 1_000) },
    });
    const { session: fresh } = await createSession(db.prisma, {
      project: "default",
      alertData: "b",
      alertType: "kubernetes",
      chainId: "k8s-chain",
      userToken: { sealed: "v1.fresh", expiresAt: inAnHour() },
    });
    const stage = await ensureStage(
      db.prisma,
      { sessionId: session.id, stageName: "investigate", stageIndex: 1 },
      [{ agentName: "KubernetesAgent", agentIndex: 1 }],
    );
    expect(await getExecutionUserToken(db.prisma, stage.executions[0]?.id ?? "")).toBeNull();
    expect(await wipeExpiredUserTokens(db.prisma)).toEqual({ sessions: 1, chatMessages: 0 });
    expect((await getSession(db.prisma, session.id))?.userToken).toBeNull();
    expect((await getSession(db.prisma, fresh.id))?.userToken).toBe("v1.fresh");
    expect(await softDeleteSession(db.prisma, fresh.id)).toBe(true);
    const deleted = await db.prisma.alertSession.findUnique({ where: { id: fresh.id } });
    expect(deleted?.userToken).toBeNull();
  });

  test("a chat turn uses its own message's token, wiped when the turn ends", async ({ db }) => {
    const session = await completedSession(db.prisma);
    const submitted = await submitChatMessage(db.prisma, {
      sessionId: session.id,
      author: "alice",
      content: "why?",
      userToken: { sealed: "v1.chat-token", expiresAt: inAnHour() },
    });
    const turn = await openChatTurn(db.prisma, {
      sessionId: session.id,
      chatId: submitted.chat.id,
      messageId: submitted.message.id,
      stageName: "Chat Response",
      agent: { agentName: "ChatAgent" },
    });
    const execution = turn.executions[0];
    if (!execution) throw new Error("no execution");
    expect(await getExecutionUserToken(db.prisma, execution.id)).toBe("v1.chat-token");
    await transitionStageStatus(db.prisma, turn.stage.id, ["pending"], "active");
    expect(await getExecutionUserToken(db.prisma, execution.id)).toBe("v1.chat-token");
    await transitionStageStatus(db.prisma, turn.stage.id, ["active"], "completed");
    const message = await getChatUserMessage(db.prisma, submitted.message.id);
    expect([message?.userToken, message?.userTokenExpiresAt]).toEqual([null, null]);
    expect(await getExecutionUserToken(db.prisma, execution.id)).toBeNull();
  });

  test("the janitor wipes an expired chat message's token", async ({ db }) => {
    const session = await completedSession(db.prisma);
    const submitted = await submitChatMessage(db.prisma, {
      sessionId: session.id,
      author: "alice",
      content: "why?",
      userToken: { sealed: "v1.chat-old", expiresAt: new Date(Date.now() - 1) },
    });
    expect(await wipeExpiredUserTokens(db.prisma)).toEqual({ sessions: 0, chatMessages: 1 });
    expect((await getChatUserMessage(db.prisma, submitted.message.id))?.userToken).toBeNull();
  });
});
