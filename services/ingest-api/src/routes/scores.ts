import type { ScoreSessionResponse } from "@tarsy/contracts";
import {
  getLatestScore,
  getSession,
  requestScore,
  ScoringInProgressError,
  ScoringUnavailableError,
  SessionNotFoundError,
  type SessionScore as SessionScoreRow,
} from "@tarsy/db";
import { Hono } from "hono";
import { deliverNow } from "../delivery.ts";
import type { IngestResources } from "../deps.ts";
import { HttpError, notFound } from "../errors.ts";
import { presentScore } from "../present.ts";
import { authorOf, pathId } from "../request.ts";

/**
 * `POST /api/v1/sessions/:id/score` (score an ended session now, whatever the chain's
 * `scoring.enabled`) and `GET /api/v1/sessions/:id/score` (its latest run).
 */
export function scoreRoutes(deps: IngestResources): Hono {
  const app = new Hono();

  app.post("/:id/score", async (c) => {
    const sessionId = pathId(c, "id", "session");
    let score: SessionScoreRow;
    try {
      score = await requestScore(deps.prisma, { sessionId, requestedBy: authorOf(c) });
    } catch (err) {
      if (err instanceof SessionNotFoundError) throw notFound("session", sessionId);
      if (err instanceof ScoringUnavailableError) {
        throw new HttpError(
          409,
          "session_not_terminal",
          `session ${sessionId} is ${err.status}; it can be scored once it has ended`,
          { status: err.status },
        );
      }
      if (err instanceof ScoringInProgressError) {
        throw new HttpError(409, "scoring_in_progress", `session ${sessionId} is being scored`);
      }
      throw err;
    }
    // Committed with its outbox row: sent now, or by the background relay once NATS is back.
    await deliverNow(deps, [`score-requested.${score.id}`]).catch((err: unknown) =>
      deps.logger.warn({ err, session_id: sessionId }, "score request left for the outbox relay"),
    );
    deps.logger.info({ session_id: sessionId, score_id: score.id }, "scoring requested");
    const body: ScoreSessionResponse = { score_id: score.id };
    return c.json(body, 202);
  });

  app.get("/:id/score", async (c) => {
    const sessionId = pathId(c, "id", "session");
    if (!(await getSession(deps.prisma, sessionId))) throw notFound("session", sessionId);
    const score = await getLatestScore(deps.prisma, sessionId);
    if (!score) {
      throw new HttpError(404, "not_found", `session ${sessionId} has not been scored`);
    }
    return c.json(presentScore(score));
  });

  return app;
}
