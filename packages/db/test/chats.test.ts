import { describe, expect } from "vitest";
import { getOrCreateChat } from "../src/chat.ts";
import { Prisma } from "../src/generated/prisma/client.ts";
import {
  ChatTurnActiveError,
  ChatUnavailableError,
  hasOpenChatTurn,
  openChatTurn,
  submitChatMessage,
  transitionStageStatus,
} from "../src/index.ts";
import { completedSession, newSession } from "./fixtures.ts";
import { dbTest as test } from "./support.ts";

describe("chats", () => {
  test("one chat per session, even when created concurrently", async ({ db }) => {
    const session = await completedSession(db.prisma);
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) => getOrCreateChat(db.prisma, session.id, `user-${i}`)),
    );
    expect(new Set(results.map((r) => r.chat.id)).size).toBe(1);
    expect(results.filter((r) => r.created)).toHaveLength(1);
  });

  test("a chat takes one message at a time", async ({ db }) => {
    const session = await completedSession(db.prisma);
    const first = await submitChatMessage(db.prisma, {
      sessionId: session.id,
      author: "alice",
      content: "why did it OOM?",
    });
    expect(first.chatCreated).toBe(true);
    await expect(
      submitChatMessage(db.prisma, { sessionId: session.id, author: "bob", content: "and?" }),
    ).rejects.toBeInstanceOf(ChatTurnActiveError);

    // The orchestrator opens the turn (idempotently) and it runs.
    const turn = await openChatTurn(db.prisma, {
      sessionId: session.id,
      chatId: first.chat.id,
      messageId: first.message.id,
      stageName: "Chat Response",
      agent: { agentName: "ChatAgent" },
    });
    expect(turn.created).toBe(true);
    expect(turn.stage.kind).toBe("chat");
    expect(turn.executions.map((e) => [e.kind, e.agentIndex])).toEqual([["chat", 1]]);
    const again = await openChatTurn(db.prisma, {
      sessionId: session.id,
      chatId: first.chat.id,
      messageId: first.message.id,
      stageName: "Chat Response",
      agent: { agentName: "ChatAgent" },
    });
    expect(again.created).toBe(false);
    expect(again.stage.id).toBe(turn.stage.id);
    await transitionStageStatus(db.prisma, turn.stage.id, ["pending"], "active");
    await expect(
      submitChatMessage(db.prisma, { sessionId: session.id, author: "bob", content: "and?" }),
    ).rejects.toBeInstanceOf(ChatTurnActiveError);

    // Once answered, the next message is accepted.
    await transitionStageStatus(db.prisma, turn.stage.id, ["active"], "completed");
    expect(await hasOpenChatTurn(db.prisma, first.chat.id)).toBe(false);
    const second = await submitChatMessage(db.prisma, {
      sessionId: session.id,
      author: "bob",
      content: "and now?",
    });
    expect(second.chatCreated).toBe(false);
    const messages = await db.prisma.chatUserMessage.findMany({
      where: { chatId: first.chat.id },
      orderBy: { createdAt: "asc" },
    });
    expect(messages.map((m) => m.content)).toEqual(["why did it OOM?", "and now?"]);
    const outbox = await db.prisma.outboxMessage.findMany({ orderBy: { id: "asc" } });
    expect(outbox.map((o) => o.messageKey)).toEqual([
      "sessionSubmitted",
      // The session's end put it in the review queue.
      "reviewStatus",
      "chatCreated",
      "chatUserMessage",
      "chatSubmitted",
      "chatUserMessage",
      "chatSubmitted",
    ]);
  });

  test("concurrent submissions: exactly one is accepted", async ({ db }) => {
    const session = await completedSession(db.prisma);
    const results = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) =>
        submitChatMessage(db.prisma, { sessionId: session.id, author: "u", content: `q${i}` }),
      ),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    for (const r of results) {
      if (r.status === "rejected") expect(r.reason).toBeInstanceOf(ChatTurnActiveError);
    }
  });

  test("the database itself refuses a second active chat stage", async ({ db }) => {
    const session = await completedSession(db.prisma);
    const { chat, message } = await submitChatMessage(db.prisma, {
      sessionId: session.id,
      author: "u",
      content: "q1",
    });
    await openChatTurn(db.prisma, {
      sessionId: session.id,
      chatId: chat.id,
      messageId: message.id,
      stageName: "Chat Response",
      agent: { agentName: "ChatAgent" },
    });
    // Bypassing submitChatMessage: a second message and turn for the same chat.
    const sneaky = await db.prisma.chatUserMessage.create({
      data: { chatId: chat.id, content: "q2", author: "u" },
    });
    const error = await openChatTurn(db.prisma, {
      sessionId: session.id,
      chatId: chat.id,
      messageId: sneaky.id,
      stageName: "Chat Response",
      agent: { agentName: "ChatAgent" },
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Prisma.PrismaClientKnownRequestError);
    expect(JSON.stringify(error)).toMatch(/P2002|23505/);
  });

  test("chat needs a completed, failed or timed-out session", async ({ db }) => {
    const running = await newSession(db.prisma);
    await expect(
      submitChatMessage(db.prisma, { sessionId: running.id, author: "u", content: "q" }),
    ).rejects.toBeInstanceOf(ChatUnavailableError);
    expect(await db.prisma.chat.count()).toBe(0);
  });
});
