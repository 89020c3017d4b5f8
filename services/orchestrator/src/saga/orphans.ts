import type { ConsumeOptions } from "@tarsy/bus";
import { isRowId, SessionNotFoundError } from "@tarsy/db";
import type { SagaDeps } from "./deps.ts";

/** What a work message named that does not exist. */
export type MissingKind =
  | "session"
  | "execution"
  | "stage"
  | "chat_message"
  | "score"
  | "feedback_reflection";

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

/** Id fields of the orchestrator's work messages and what each names. */
const ID_FIELDS: Record<string, MissingKind> = {
  session_id: "session",
  execution_id: "execution",
  stage_id: "stage",
  chat_id: "chat_message",
  message_id: "chat_message",
  score_id: "score",
  reflection_id: "feedback_reflection",
};

/**
 * Throws OrphanedWorkError for an id that cannot name a row (the schema accepts any
 * non-empty string). Every handler calls it first.
 */
export function assertRowIds(message: object): void {
  for (const [field, missing] of Object.entries(ID_FIELDS)) {
    const value = (message as Record<string, unknown>)[field];
    if (typeof value === "string" && !isRowId(value)) throw new OrphanedWorkError(missing, value);
  }
}

/** What a handler error says is missing, or undefined when it is no orphan. */
function orphanOf(err: unknown): { missing: MissingKind; id: string } | undefined {
  if (err instanceof SessionNotFoundError) return { missing: "session", id: err.sessionId };
  if (err instanceof OrphanedWorkError) return { missing: err.missing, id: err.id };
  return undefined;
}

/**
 * The orchestrator consumer's `drop` option: a message about something missing is
 * acknowledged at once with one warn line (subject, kind, what is missing, ids) and a
 * `tarsy_work_orphaned_total` count, instead of being retried into the dead letters.
 */
export function dropOrphans(
  deps: Pick<SagaDeps, "logger" | "metrics">,
): NonNullable<ConsumeOptions<"orchestrator">["drop"]> {
  return (err, message, ctx) => {
    const orphan = orphanOf(err);
    if (!orphan) return false;
    const kind = ctx.subject.split(".").pop() ?? message.key;
    deps.logger.warn(
      {
        subject: ctx.subject,
        kind,
        missing: orphan.missing,
        missing_id: orphan.id,
        session_id: message.payload.session_id,
      },
      `work message names a missing ${orphan.missing}; dropped`,
    );
    deps.metrics.workOrphaned(kind, orphan.missing);
    return true;
  };
}
