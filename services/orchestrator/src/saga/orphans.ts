import type { ConsumeContext, ConsumerHandlers } from "@tarsy/bus";
import { SessionNotFoundError } from "@tarsy/db";
import type { SagaDeps } from "./deps.ts";

/** What a work message named that does not exist. */
export type MissingKind = "session" | "execution" | "stage" | "chat_message";

/**
 * A valid work message names a session, execution, stage or chat message that does not exist
 * (withdrawn, deleted, or never ours). Not worth a retry nor a dead letter: it is dropped.
 */
export class OrphanedWorkError extends Error {
  readonly code = "orphaned_work" as const;
  constructor(
    readonly missing: MissingKind,
    readonly id: string,
  ) {
    super(`${missing} ${id} does not exist`);
    this.name = "OrphanedWorkError";
  }
}

type AnyHandler = (message: { session_id: string }, ctx: ConsumeContext) => Promise<void>;

/**
 * Wraps every handler so a message about something missing is acknowledged at once with one
 * warn line (subject, kind, what is missing, ids) and a `tarsy_work_orphaned_total` count,
 * instead of being retried into the dead letters.
 */
export function dropOrphans(
  deps: Pick<SagaDeps, "logger" | "metrics">,
  handlers: ConsumerHandlers<"orchestrator">,
): ConsumerHandlers<"orchestrator"> {
  const wrapped: Record<string, AnyHandler> = {};
  for (const [key, handler] of Object.entries(handlers) as [string, AnyHandler][]) {
    wrapped[key] = async (message, ctx) => {
      try {
        await handler(message, ctx);
      } catch (err) {
        const orphan =
          err instanceof SessionNotFoundError
            ? { missing: "session" as const, id: err.sessionId }
            : err instanceof OrphanedWorkError
              ? { missing: err.missing, id: err.id }
              : undefined;
        if (!orphan) throw err;
        const kind = ctx.subject.split(".").pop() ?? key;
        deps.logger.warn(
          {
            subject: ctx.subject,
            kind,
            missing: orphan.missing,
            missing_id: orphan.id,
            session_id: message.session_id,
          },
          `work message names a missing ${orphan.missing}; dropped`,
        );
        deps.metrics.workOrphaned(kind, orphan.missing);
      }
    };
  }
  return wrapped as unknown as ConsumerHandlers<"orchestrator">;
}
