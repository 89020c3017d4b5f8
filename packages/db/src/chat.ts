/**
 * Chat (one per session) and its user messages. A chat has at most one open turn: a user
 * message whose chat stage is missing (not yet started) or pending/active. Submissions are
 * serialized by the chat row lock; a partial unique index on stages backs this up.
 */
import { randomUUID } from "node:crypto";
import { ACTIVE_EXECUTION_STATUSES, CHAT_SESSION_STATUSES } from "@tarsy/contracts";
import { type DbClient, inTransaction } from "./client.ts";
import { ChatTurnActiveError, ChatUnavailableError, SessionNotFoundError } from "./errors.ts";
import type { Chat, ChatUserMessage } from "./generated/prisma/client.ts";
import { enqueueOutbox } from "./outbox.ts";
import {
  type ExecutionInput,
  ensureStage,
  nextStageIndex,
  type StageWithExecutions,
} from "./stages.ts";
import type { StoredUserToken } from "./user-tokens.ts";

/** Returns the session's chat, creating it on first use. */
export function getOrCreateChat(
  client: DbClient,
  sessionId: string,
  createdBy: string,
): Promise<{ chat: Chat; created: boolean }> {
  return inTransaction(client, async (tx) => {
    const inserted = await tx.$queryRaw<{ id: string }[]>`
      INSERT INTO chats (session_id, created_by) VALUES (${sessionId}::uuid, ${createdBy})
      ON CONFLICT (session_id) DO NOTHING RETURNING id`;
    const chat = await tx.chat.findUniqueOrThrow({ where: { sessionId } });
    return { chat, created: inserted.length === 1 };
  });
}

export function getChatBySession(client: DbClient, sessionId: string): Promise<Chat | null> {
  return client.chat.findUnique({ where: { sessionId } });
}

/** True when the chat has a message not yet answered (its stage missing or not terminal). */
export async function hasOpenChatTurn(client: DbClient, chatId: string): Promise<boolean> {
  const open = await client.chatUserMessage.count({
    where: {
      chatId,
      OR: [{ stage: null }, { stage: { status: { in: [...ACTIVE_EXECUTION_STATUSES] } } }],
    },
  });
  return open > 0;
}

export interface SubmitChatMessageInput {
  readonly sessionId: string;
  readonly author: string;
  readonly content: string;
  /** The asking user's bearer token, already sealed, kept until the turn ends. */
  readonly userToken?: StoredUserToken | null;
}

export interface SubmittedChatMessage {
  readonly chat: Chat;
  readonly chatCreated: boolean;
  readonly message: ChatUserMessage;
  /** The id the stage answering this message will have (`openChatTurn` creates it). */
  readonly stageId: string;
}

/**
 * Stores a user's chat message and, in the same transaction, the outbox messages that
 * announce it (`chatCreated` on first use, `chatUserMessage`, `chatSubmitted`).
 * Throws ChatUnavailableError for a session that cannot chat and ChatTurnActiveError while
 * the previous message is still being answered.
 */
export function submitChatMessage(
  client: DbClient,
  input: SubmitChatMessageInput,
): Promise<SubmittedChatMessage> {
  return inTransaction(client, async (tx) => {
    const session = await tx.alertSession.findFirst({
      where: { id: input.sessionId, deletedAt: null },
      select: { status: true },
    });
    if (session === null) throw new SessionNotFoundError(input.sessionId);
    if (!CHAT_SESSION_STATUSES.includes(session.status)) {
      throw new ChatUnavailableError(input.sessionId, session.status);
    }
    const { chat, created } = await getOrCreateChat(tx, input.sessionId, input.author);
    await tx.$queryRaw`SELECT id FROM chats WHERE id = ${chat.id}::uuid FOR UPDATE`;
    if (await hasOpenChatTurn(tx, chat.id)) throw new ChatTurnActiveError(chat.id);
    const message = await tx.chatUserMessage.create({
      data: {
        chatId: chat.id,
        content: input.content,
        author: input.author,
        userToken: input.userToken?.sealed ?? null,
        userTokenExpiresAt: input.userToken?.expiresAt ?? null,
      },
    });
    await tx.chat.update({
      where: { id: chat.id },
      data: { lastInteractionAt: message.createdAt },
    });
    const timestamp = message.createdAt.toISOString();
    const stageId = randomUUID();
    if (created) {
      await enqueueOutbox(tx, "chatCreated", {
        v: 1,
        type: "chat.created",
        session_id: input.sessionId,
        chat_id: chat.id,
        created_by: chat.createdBy,
        timestamp,
      });
    }
    await enqueueOutbox(tx, "chatUserMessage", {
      v: 1,
      type: "chat.user_message",
      session_id: input.sessionId,
      chat_id: chat.id,
      message_id: message.id,
      content: message.content,
      author: message.author,
      stage_id: stageId,
      timestamp,
    });
    await enqueueOutbox(tx, "chatSubmitted", {
      v: 1,
      session_id: input.sessionId,
      chat_id: chat.id,
      message_id: message.id,
      stage_id: stageId,
      submitted_at: timestamp,
    });
    return { chat, chatCreated: created, message, stageId };
  });
}

export interface OpenChatTurnInput {
  /** The id chosen at submit (`SubmittedChatMessage.stageId`), when the message carried it. */
  readonly stageId?: string;
  readonly sessionId: string;
  readonly chatId: string;
  readonly messageId: string;
  readonly stageName: string;
  readonly agent: Omit<ExecutionInput, "agentIndex" | "kind">;
}

/**
 * Creates the chat response stage (kind chat) and its single execution for a user message.
 * Idempotent per message: a repeat returns the existing stage with `created: false`.
 */
export function openChatTurn(
  client: DbClient,
  input: OpenChatTurnInput,
): Promise<StageWithExecutions> {
  return inTransaction(client, async (tx) => {
    const existing = await tx.stage.findUnique({
      where: { chatUserMessageId: input.messageId },
      include: { executions: { orderBy: [{ agentIndex: "asc" }, { createdAt: "asc" }] } },
    });
    if (existing !== null) {
      const { executions, ...stage } = existing;
      return { stage, executions, created: false };
    }
    return ensureStage(
      tx,
      {
        id: input.stageId,
        sessionId: input.sessionId,
        stageName: input.stageName,
        stageIndex: await nextStageIndex(tx, input.sessionId),
        kind: "chat",
        expectedAgentCount: 1,
        chatId: input.chatId,
        chatUserMessageId: input.messageId,
      },
      [{ ...input.agent, agentIndex: 1, kind: "chat" }],
    );
  });
}

/** Records activity on the chat (a turn ended) at `at`. */
export async function touchChat(client: DbClient, chatId: string, at: Date): Promise<void> {
  await client.chat.updateMany({ where: { id: chatId }, data: { lastInteractionAt: at } });
}

export function getChatUserMessage(client: DbClient, id: string): Promise<ChatUserMessage | null> {
  return client.chatUserMessage.findUnique({ where: { id } });
}
