/** Errors of packages/db. Each has a readonly string-literal `code`. */
export type DbErrorCode =
  | "migration_checksum_mismatch"
  | "migration_failed"
  | "migration_unfinished"
  | "migrations_dir_invalid"
  | "session_not_found"
  | "chat_turn_active"
  | "chat_unavailable"
  | "invalid_outbox_payload"
  | "session_not_terminal"
  | "scoring_in_progress";

export abstract class DbError extends Error {
  abstract readonly code: DbErrorCode;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** An applied migration's file changed since it was applied. */
export class MigrationChecksumMismatchError extends DbError {
  readonly code = "migration_checksum_mismatch" as const;
  constructor(
    readonly migrationName: string,
    readonly appliedChecksum: string,
    readonly fileChecksum: string,
  ) {
    super(
      `Migration ${migrationName} was modified after it was applied ` +
        `(applied checksum ${appliedChecksum}, file checksum ${fileChecksum}). ` +
        "Restore the file and put the change in a new migration.",
    );
  }
}

/** A migration's SQL failed; its transaction was rolled back. */
export class MigrationFailedError extends DbError {
  readonly code = "migration_failed" as const;
  constructor(
    readonly migrationName: string,
    cause: unknown,
  ) {
    super(`Migration ${migrationName} failed and was rolled back: ${String(cause)}`, { cause });
  }
}

/** `_prisma_migrations` has a started but unfinished, not rolled back migration (Prisma P3009). */
export class MigrationUnfinishedError extends DbError {
  readonly code = "migration_unfinished" as const;
  constructor(readonly migrationName: string) {
    super(
      `Migration ${migrationName} started but never finished. Inspect the database, then mark ` +
        "it rolled back (`prisma migrate resolve --rolled-back`) or applied.",
    );
  }
}

export class MigrationsDirInvalidError extends DbError {
  readonly code = "migrations_dir_invalid" as const;
}

export class SessionNotFoundError extends DbError {
  readonly code = "session_not_found" as const;
  constructor(readonly sessionId: string) {
    super(`Session ${sessionId} does not exist or was deleted`);
  }
}

/** The chat already has a turn waiting or running (HTTP 409). */
export class ChatTurnActiveError extends DbError {
  readonly code = "chat_turn_active" as const;
  constructor(readonly chatId: string) {
    super(`Chat ${chatId} already has a message being answered`);
  }
}

/** Chat needs a completed, failed or timed-out session (HTTP 409/400 at the API). */
export class ChatUnavailableError extends DbError {
  readonly code = "chat_unavailable" as const;
  constructor(
    readonly sessionId: string,
    readonly status: string,
  ) {
    super(`Session ${sessionId} is ${status}; chat needs a completed, failed or timed-out session`);
  }
}

export class InvalidOutboxPayloadError extends DbError {
  readonly code = "invalid_outbox_payload" as const;
}

/** Scoring needs an ended session (HTTP 409 at the API). */
export class ScoringUnavailableError extends DbError {
  readonly code = "session_not_terminal" as const;
  constructor(
    readonly sessionId: string,
    readonly status: string,
  ) {
    super(`Session ${sessionId} is ${status}; scoring needs an ended session`);
  }
}

/** The session already has a score in progress (HTTP 409 at the API). */
export class ScoringInProgressError extends DbError {
  readonly code = "scoring_in_progress" as const;
  constructor(readonly sessionId: string) {
    super(`Session ${sessionId} is already being scored`);
  }
}
