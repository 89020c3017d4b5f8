/** The runbook a session runs with: resolved once, by whichever execution gets there first. */
import type { DbClient } from "./client.ts";
import { SessionNotFoundError } from "./errors.ts";
import type { RunbookSource } from "./generated/prisma/client.ts";

export interface SessionRunbook {
  /** The text the prompts carry; null when there is none ("No runbook available."). */
  readonly content: string | null;
  readonly source: RunbookSource;
  /** Why the session fell back from its URL, else null. */
  readonly error: string | null;
  readonly resolvedAt: Date;
}

const SELECT = {
  runbookContent: true,
  runbookSource: true,
  runbookError: true,
  runbookResolvedAt: true,
} as const;

type Row = {
  runbookContent: string | null;
  runbookSource: RunbookSource | null;
  runbookError: string | null;
  runbookResolvedAt: Date | null;
};

function toRunbook(row: Row | null): SessionRunbook | null {
  if (!row?.runbookSource || !row.runbookResolvedAt) return null;
  return {
    content: row.runbookContent,
    source: row.runbookSource,
    error: row.runbookError,
    resolvedAt: row.runbookResolvedAt,
  };
}

/** The session's resolved runbook, or null while none is stored. */
export async function getSessionRunbook(
  client: DbClient,
  sessionId: string,
): Promise<SessionRunbook | null> {
  const row = await client.alertSession.findUnique({ where: { id: sessionId }, select: SELECT });
  return toRunbook(row);
}

/**
 * Stores `runbook` unless the session has one already; either way returns the stored one and
 * whether it is this call's. A conditional update, so concurrent executions (parallel agents,
 * replicas on other runners, redeliveries) all end up with the same text.
 */
export async function claimSessionRunbook(
  client: DbClient,
  sessionId: string,
  runbook: Omit<SessionRunbook, "resolvedAt">,
): Promise<{ runbook: SessionRunbook; claimed: boolean }> {
  const resolvedAt = new Date();
  const { count } = await client.alertSession.updateMany({
    where: { id: sessionId, runbookSource: null },
    data: {
      runbookContent: runbook.content,
      runbookSource: runbook.source,
      runbookError: runbook.error,
      runbookResolvedAt: resolvedAt,
    },
  });
  if (count === 1) return { runbook: { ...runbook, resolvedAt }, claimed: true };
  const stored = await getSessionRunbook(client, sessionId);
  if (!stored) throw new SessionNotFoundError(sessionId);
  return { runbook: stored, claimed: false };
}
