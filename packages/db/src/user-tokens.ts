/**
 * The users' bearer tokens kept (sealed by the caller, AES-GCM) while their sessions and chat
 * turns run, for MCP servers with per-user credentials. They are written with the row that
 * creates the session or chat message, wiped when it ends (session terminal, chat stage
 * terminal, soft delete) and, for what a crash left behind, by a janitor once they expire.
 */
import type { DbClient } from "./client.ts";

export interface StoredUserToken {
  /** The sealed form (never the token itself). */
  readonly sealed: string;
  readonly expiresAt: Date;
}

export const WIPED_USER_TOKEN = { userToken: null, userTokenExpiresAt: null } as const;

/**
 * The sealed user token an execution's tool calls carry: a chat turn's executions use the
 * token of that chat message, every other execution the session's. Null when there is none,
 * it was wiped or it expired.
 */
export async function getExecutionUserToken(
  client: DbClient,
  executionId: string,
  now: Date = new Date(),
): Promise<string | null> {
  const rows = await client.$queryRaw<Array<{ token: string | null; expires: Date | null }>>`
    SELECT CASE WHEN st.chat_user_message_id IS NOT NULL THEN m.user_token ELSE s.user_token END AS token,
           CASE WHEN st.chat_user_message_id IS NOT NULL THEN m.user_token_expires_at
                ELSE s.user_token_expires_at END AS expires
    FROM agent_executions e
    JOIN alert_sessions s ON s.id = e.session_id
    LEFT JOIN stages st ON st.id = e.stage_id
    LEFT JOIN chat_user_messages m ON m.id = st.chat_user_message_id
    WHERE e.id = ${executionId}::uuid AND s.deleted_at IS NULL`;
  const row = rows[0];
  if (!row?.token || (row.expires && row.expires <= now)) return null;
  return row.token;
}

/** Wipes the token of the chat message a (chat) stage answers; true when one was there. */
export async function wipeChatStageUserToken(client: DbClient, stageId: string): Promise<boolean> {
  const count = await client.$executeRaw`
    UPDATE chat_user_messages SET user_token = NULL, user_token_expires_at = NULL
    WHERE id = (SELECT chat_user_message_id FROM stages WHERE id = ${stageId}::uuid)
      AND user_token IS NOT NULL`;
  return count > 0;
}

export interface WipedUserTokens {
  readonly sessions: number;
  readonly chatMessages: number;
}

/** Wipes every stored token whose expiry passed (what a crash or a lost event left behind). */
export async function wipeExpiredUserTokens(
  client: DbClient,
  now: Date = new Date(),
): Promise<WipedUserTokens> {
  const sessions = await client.alertSession.updateMany({
    where: { userTokenExpiresAt: { lte: now } },
    data: WIPED_USER_TOKEN,
  });
  const chatMessages = await client.chatUserMessage.updateMany({
    where: { userTokenExpiresAt: { lte: now } },
    data: WIPED_USER_TOKEN,
  });
  return { sessions: sessions.count, chatMessages: chatMessages.count };
}
