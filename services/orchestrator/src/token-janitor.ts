import { type PrismaClient, type WipedUserTokens, wipeExpiredUserTokens } from "@tarsy/db";
import type { Logger } from "@tarsy/runtime";

export interface TokenJanitor {
  /** One pass now; also runs on its interval. */
  sweep(): Promise<WipedUserTokens>;
  stop(): Promise<void>;
}

/**
 * Wipes the users' tokens (per-user MCP credentials) whose expiry passed: those a crash or a
 * lost event left on a session or chat message that never reached its end.
 */
export function startTokenJanitor(
  db: PrismaClient,
  options: { intervalMs: number; logger: Logger },
): TokenJanitor {
  let running: Promise<WipedUserTokens> | null = null;
  const sweep = (): Promise<WipedUserTokens> => {
    running ??= (async () => {
      try {
        const wiped = await wipeExpiredUserTokens(db);
        if (wiped.sessions + wiped.chatMessages > 0) {
          options.logger.info(
            { sessions: wiped.sessions, chat_messages: wiped.chatMessages },
            "wiped expired user tokens",
          );
        }
        return wiped;
      } catch (err) {
        options.logger.error({ err }, "wiping expired user tokens failed");
        return { sessions: 0, chatMessages: 0 };
      } finally {
        running = null;
      }
    })();
    return running;
  };
  const timer = setInterval(() => void sweep(), options.intervalMs);
  timer.unref();
  return {
    sweep,
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
