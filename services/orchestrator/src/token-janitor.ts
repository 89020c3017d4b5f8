import { type PrismaClient, type WipedUserTokens, wipeExpiredUserTokens } from "@tarsy/db";
import type { ServiceMetrics } from "@tarsy/metrics";
import type { Logger } from "@tarsy/runtime";

/** The janitor's counter: what each sweep wiped, by what held the token. */
export type TokenJanitorMetricSet = Pick<ServiceMetrics<"orchestrator">, "userTokensWiped">;

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
  options: { intervalMs: number; logger: Logger; metrics: TokenJanitorMetricSet },
): TokenJanitor {
  const wipedTotal = options.metrics.userTokensWiped;
  // Both series exist from the start, so a rate is 0 (not absent) until something is wiped.
  wipedTotal.inc({ holder: "session" }, 0);
  wipedTotal.inc({ holder: "chat_message" }, 0);
  let running: Promise<WipedUserTokens> | null = null;
  const sweep = (): Promise<WipedUserTokens> => {
    running ??= (async () => {
      try {
        const wiped = await wipeExpiredUserTokens(db);
        wipedTotal.inc({ holder: "session" }, wiped.sessions);
        wipedTotal.inc({ holder: "chat_message" }, wiped.chatMessages);
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
