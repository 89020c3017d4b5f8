/**
 * Session scores (the LLM judge of #21): one row per scoring run, at most one in progress per
 * session (a partial unique index). ingest-api creates the row of an on-demand run; the
 * orchestrator creates an automatic one, opens the judge's stage and owns the row's status;
 * the runner writes what the judge said.
 */
import {
  type FailureTag,
  type ScoringStatus,
  type SessionStatus,
  TERMINAL_SESSION_STATUSES,
} from "@tarsy/contracts";
import { type DbClient, inTransaction } from "./client.ts";
import { ScoringInProgressError, ScoringUnavailableError, SessionNotFoundError } from "./errors.ts";
import { Prisma, type SessionScore } from "./generated/prisma/client.ts";
import { enqueueOutbox } from "./outbox.ts";

export type { SessionScore };

/** The judge's stage, appended after the chain (the Go TARSy's name). */
export const SCORING_STAGE_NAME = "Evaluation & Learning";

const isUniqueViolation = (err: unknown): boolean =>
  err instanceof Prisma.PrismaClientKnownRequestError && err.code === "P2002";

/**
 * Creates a run `in_progress` for an ended session. Throws ScoringInProgressError when one is
 * running already (the partial unique index decides, so two requests racing cannot both win).
 */
export async function createScore(
  client: DbClient,
  input: { sessionId: string; triggeredBy: string },
): Promise<SessionScore> {
  try {
    return await client.sessionScore.create({
      data: { sessionId: input.sessionId, scoreTriggeredBy: input.triggeredBy, promptHash: "" },
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new ScoringInProgressError(input.sessionId);
    throw err;
  }
}

/**
 * `POST /sessions/:id/score`: checks the session has ended, creates the run and queues its
 * `scoreRequested` work in one transaction (nothing is stored when the request is refused).
 */
export function requestScore(
  client: DbClient,
  input: { sessionId: string; requestedBy: string },
): Promise<SessionScore> {
  return inTransaction(client, async (tx) => {
    // The session's row lock (as the orchestrator's handlers take it) serializes requests.
    const [session] = await tx.$queryRaw<{ status: SessionStatus }[]>`
      SELECT status FROM alert_sessions
       WHERE id = ${input.sessionId}::uuid AND deleted_at IS NULL FOR UPDATE`;
    if (!session) throw new SessionNotFoundError(input.sessionId);
    if (!TERMINAL_SESSION_STATUSES.includes(session.status)) {
      throw new ScoringUnavailableError(input.sessionId, session.status);
    }
    const running = await tx.sessionScore.count({
      where: { sessionId: input.sessionId, status: "in_progress" },
    });
    if (running > 0) throw new ScoringInProgressError(input.sessionId);
    const score = await createScore(tx, {
      sessionId: input.sessionId,
      triggeredBy: input.requestedBy,
    });
    await enqueueOutbox(tx, "scoreRequested", {
      v: 1,
      session_id: input.sessionId,
      score_id: score.id,
      requested_by: input.requestedBy,
      requested_at: score.startedAt.toISOString(),
    });
    return score;
  });
}

export function getScore(client: DbClient, id: string): Promise<SessionScore | null> {
  return client.sessionScore.findUnique({ where: { id } });
}

export function getScoreByStage(client: DbClient, stageId: string): Promise<SessionScore | null> {
  return client.sessionScore.findUnique({ where: { stageId } });
}

/** The session's most recent run (whatever its status), or null. */
export function getLatestScore(client: DbClient, sessionId: string): Promise<SessionScore | null> {
  return client.sessionScore.findFirst({
    where: { sessionId, session: { deletedAt: null } },
    orderBy: [{ startedAt: "desc" }, { id: "desc" }],
  });
}

/** Ties the run to its judge stage (once). */
export async function linkScoreStage(
  client: DbClient,
  scoreId: string,
  stageId: string,
): Promise<void> {
  await client.sessionScore.updateMany({
    where: { id: scoreId, stageId: null },
    data: { stageId },
  });
}

/** What the judge said: written by the runner before its execution finishes. */
export interface ScoreResult {
  readonly totalScore: number;
  readonly scoreAnalysis: string;
  readonly toolImprovementReport: string;
  readonly failureTags: readonly FailureTag[];
  readonly promptHash: string;
}

/** Stores the judge's result on the run of `stageId` (only while it is in progress). */
export async function recordScoreResult(
  client: DbClient,
  stageId: string,
  result: ScoreResult,
): Promise<boolean> {
  const { count } = await client.sessionScore.updateMany({
    where: { stageId, status: "in_progress" },
    data: {
      totalScore: result.totalScore,
      scoreAnalysis: result.scoreAnalysis,
      toolImprovementReport: result.toolImprovementReport,
      failureTags: [...result.failureTags],
      promptHash: result.promptHash,
    },
  });
  return count === 1;
}

/**
 * Ends a run: completed when the judge's result is stored, else failed with `error`.
 * Conditional on `in_progress`, so a redelivery changes nothing. Returns the ended row, or
 * null when it had ended already.
 */
export async function finishScore(
  client: DbClient,
  scoreId: string,
  outcome: { succeeded: boolean; error: string | null; at: Date },
): Promise<SessionScore | null> {
  const current = await client.sessionScore.findUnique({ where: { id: scoreId } });
  if (!current || current.status !== "in_progress") return null;
  const status: ScoringStatus =
    outcome.succeeded && current.totalScore !== null ? "completed" : "failed";
  const error = status === "failed" ? (outcome.error ?? "the judge gave no score") : null;
  const { count } = await client.sessionScore.updateMany({
    where: { id: scoreId, status: "in_progress" },
    data: { status, errorMessage: error, completedAt: outcome.at },
  });
  return count === 1 ? { ...current, status, errorMessage: error, completedAt: outcome.at } : null;
}

/** The tools each MCP server offered the session's agents (from the stored tool listings). */
export async function listSessionAvailableTools(
  client: DbClient,
  sessionId: string,
): Promise<Map<string, { name: string; description: string }[]>> {
  const rows = await client.mCPInteraction.findMany({
    where: { sessionId, interactionType: "tool_list" },
    select: { serverName: true, availableTools: true },
    orderBy: { createdAt: "asc" },
  });
  const byServer = new Map<string, Map<string, string>>();
  for (const row of rows) {
    const tools = Array.isArray(row.availableTools) ? row.availableTools : [];
    const known = byServer.get(row.serverName) ?? new Map<string, string>();
    for (const tool of tools) {
      if (tool && typeof tool === "object" && "name" in tool && typeof tool.name === "string") {
        const description =
          "description" in tool && typeof tool.description === "string" ? tool.description : "";
        if (!known.has(tool.name)) known.set(tool.name, description);
      }
    }
    byServer.set(row.serverName, known);
  }
  return new Map(
    [...byServer].map(([server, tools]) => [
      server,
      [...tools].map(([name, description]) => ({ name, description })),
    ]),
  );
}
