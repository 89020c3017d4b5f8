import type { TokenSeal } from "@tarsy/authz";
import { type DbClient, getExecutionUserToken, isRowId } from "@tarsy/db";
import type { Logger } from "@tarsy/runtime";
import type { UserTokenLookup } from "./credentials.ts";

/**
 * The user token of an execution as ingest-api stored it: sealed (AES-GCM) on the session row,
 * or on the chat message for a chat turn's executions; opened here with TARSY_TOKEN_KEY. The
 * token never travels in a NATS message.
 */
export function createStoredUserTokens(
  client: DbClient,
  seal: TokenSeal,
  logger: Logger,
): UserTokenLookup {
  return async (scope) => {
    if (!isRowId(scope.executionId)) return undefined;
    const sealed = await getExecutionUserToken(client, scope.executionId);
    if (!sealed) return undefined;
    try {
      return seal.open(sealed);
    } catch {
      logger.warn(
        { execution_id: scope.executionId, session_id: scope.sessionId },
        "the stored user token could not be opened (was TARSY_TOKEN_KEY changed?)",
      );
      return undefined;
    }
  };
}
