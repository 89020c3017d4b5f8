import { ChatMessageRequestSchema, type ChatMessageResponse } from "@tarsy/contracts";
import {
  ChatTurnActiveError,
  ChatUnavailableError,
  getSession,
  SessionNotFoundError,
  submitChatMessage,
  withdrawUnpublishedChatMessage,
} from "@tarsy/db";
import { Hono } from "hono";
import { deliverNow } from "../delivery.ts";
import type { IngestResources } from "../deps.ts";
import { conflict, notFound, unavailable } from "../errors.ts";
import { authorOf, pathId, readJson } from "../request.ts";
import { sealedUserTokenOf } from "../user-token.ts";

const CHAT_BODY_LIMIT = 256 * 1024;

/** `POST /api/v1/sessions/:id/chat/messages`: a follow-up question on a finished session. */
export function chatRoutes(deps: IngestResources): Hono {
  const app = new Hono();
  app.post("/:id/chat/messages", async (c) => {
    const sessionId = pathId(c, "id", "session");
    const body = await readJson(c, ChatMessageRequestSchema, {
      limit: CHAT_BODY_LIMIT,
      maxDepth: deps.settings.maxJsonDepth,
    });
    const session = await getSession(deps.prisma, sessionId);
    if (!session) throw notFound("session", sessionId);
    const chain = deps.config.chains.get(session.chainId);
    if (!chain?.chat.enabled) {
      throw conflict(`chat is disabled for chain ${session.chainId}`, {
        chain_id: session.chainId,
      });
    }
    let submitted: Awaited<ReturnType<typeof submitChatMessage>>;
    try {
      submitted = await submitChatMessage(deps.prisma, {
        sessionId,
        author: authorOf(c),
        content: body.content,
        userToken: sealedUserTokenOf(deps, c),
      });
    } catch (err) {
      if (err instanceof SessionNotFoundError) throw notFound("session", sessionId);
      if (err instanceof ChatUnavailableError) {
        throw conflict(
          `session is ${err.status}; chat needs a completed, failed or timed-out session`,
          {
            status: err.status,
          },
        );
      }
      if (err instanceof ChatTurnActiveError) {
        throw conflict("the previous chat message is still being answered", {
          chat_id: err.chatId,
        });
      }
      throw err;
    }
    const { chat, message, chatCreated, stageId } = submitted;
    try {
      await deliverNow(deps, [
        `chat-created.${chat.id}`,
        `chat-user-message.${message.id}`,
        `chat-submitted.${message.id}`,
      ]);
    } catch (err) {
      const ids = { chatId: chat.id, messageId: message.id, chatCreated };
      if (await withdrawUnpublishedChatMessage(deps.prisma, ids)) {
        deps.logger.warn({ err, session_id: sessionId }, "chat message not published; withdrawn");
        throw unavailable(
          "the message bus is unavailable; the message was not accepted, retry",
          err,
        );
      }
    }
    deps.logger.info({ session_id: sessionId, chat_id: chat.id }, "chat message accepted");
    const response: ChatMessageResponse = {
      chat_id: chat.id,
      message_id: message.id,
      stage_id: stageId,
    };
    return c.json(response, 202);
  });
  return app;
}
