import type { ConsumeContext, ConsumerHandlers } from "@tarsy/bus";
import { isRowId, SessionNotFoundError } from "@tarsy/db";
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

/** Id fields of the orchestrator's work messages and what each names. */
const ID_FIELDS: Record<string, MissingKind> = {
  session_id: "session",
  execution_id: "execution",
  stage_id: "stage",
  chat_id: "chat_message",
  message_id: "chat_message",
};

/** Throws for an id that cannot name a row (the schema accepts any non-empty string). */
function checkIds(message: object): void {
  for (const [field, missing] of Object.entries(ID_FIELDS)) {
    const value = (message as Record<string, unknown>)[field];
    if (typeof value === "string" && !isRowId(value)) throw new OrphanedWorkError(missing, value);
  }
}

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
        checkIds(message);
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
