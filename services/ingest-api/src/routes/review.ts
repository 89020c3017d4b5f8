import {
  type ReviewActivityResponse,
  type TriageGroupResponse,
  TriageGroupSchema,
  TriageQuerySchema,
  UpdateReviewRequestSchema,
  type UpdateReviewResponse,
} from "@tarsy/contracts";
import {
  applyReviewAction,
  EMPTY_SESSION_STATS,
  getSession,
  listReviewActivity,
  listTriageGroup,
  reviewStateOf,
} from "@tarsy/db";
import { Hono } from "hono";
import { identityOf } from "../access.ts";
import { noteAudit } from "../authz/audit.ts";
import { visibleProjects } from "../authz/guard.ts";
import { deliverEntry } from "../delivery.ts";
import type { IngestResources } from "../deps.ts";
import { HttpError, notFound } from "../errors.ts";
import { presentSummary } from "../present.ts";
import { authorOf, pathId, readJson, readQuery } from "../request.ts";

const REVIEW_BODY_LIMIT = 256 * 1024;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type Result = UpdateReviewResponse["results"][number];

/**
 * The review workflow (the Go TARSy's, issue #21): `PATCH /review` applies one action to each
 * named session independently (per-session results, always 200 once the body is valid),
 * `GET /:id/review-activity` is a session's history, `GET /triage/:group` one triage bucket.
 * The actor is always the caller's identity.
 */
export function reviewRoutes(deps: IngestResources): Hono {
  const app = new Hono();
  const { prisma } = deps;
  const { authorizer } = deps.access;

  app.patch("/review", async (c) => {
    const body = await readJson(c, UpdateReviewRequestSchema, {
      limit: REVIEW_BODY_LIMIT,
      maxDepth: deps.settings.maxJsonDepth,
    });
    const actor = authorOf(c);
    const identity = identityOf(c);
    const results: Result[] = [];
    const seen = new Set<string>();
    for (const raw of body.session_ids) {
      const id = raw.toLowerCase();
      const fail = (error: string): Result => ({ session_id: raw, success: false, error });
      if (seen.has(id)) {
        results.push(fail("duplicate: the session is named earlier in session_ids"));
        continue;
      }
      seen.add(id);
      const session = UUID.test(id) ? await getSession(prisma, id) : null;
      // A session the caller may not see answers exactly as a missing one does.
      if (
        !session ||
        (authorizer.enabled && !authorizer.can(identity, "get", session.project, id))
      ) {
        results.push(fail("not_found"));
        continue;
      }
      if (body.session_ids.length === 1) noteAudit(c, { sessionId: id, project: session.project });
      if (authorizer.enabled && !authorizer.can(identity, "update", session.project, id)) {
        results.push(fail(`forbidden: you may not update sessions of project ${session.project}`));
        continue;
      }
      const outcome = await applyReviewAction(prisma, id, {
        action: body.action,
        actor,
        ...(body.quality_rating === undefined ? {} : { qualityRating: body.quality_rating }),
        ...(body.action_taken === undefined ? {} : { actionTaken: body.action_taken }),
        ...(body.investigation_feedback === undefined
          ? {}
          : { investigationFeedback: body.investigation_feedback }),
        ...(body.reassign === undefined ? {} : { reassign: body.reassign }),
        reflectFeedback: deps.config.defaults.memory.enabled,
        ...(deps.clock ? { now: deps.clock() } : {}),
      });
      switch (outcome.outcome) {
        case "not_found":
          results.push(fail("not_found"));
          break;
        case "conflict":
          results.push(fail(`conflict: ${outcome.message}`));
          break;
        case "applied":
          // Committed with its outbox row: published now, or by the relay if NATS is down.
          await deliverEntry(deps, outcome.event).catch((err: unknown) =>
            deps.logger.warn({ err, session_id: id }, "review.status left for the outbox relay"),
          );
          if (outcome.feedbackReflection) {
            // The feedback reflector's work (investigation memory), committed with the review.
            await deliverEntry(deps, outcome.feedbackReflection).catch((err: unknown) =>
              deps.logger.warn({ err, session_id: id }, "feedback reflection left for the relay"),
            );
          }
          deps.logger.info(
            { session_id: id, action: body.action, review_status: outcome.session.reviewStatus },
            "review changed",
          );
          results.push({ session_id: raw, success: true, review: reviewStateOf(outcome.session) });
          break;
        default:
          return outcome satisfies never;
      }
    }
    noteAudit(c, {
      reason: `review ${body.action}: ${results.filter((r) => r.success).length}/${results.length} applied`,
    });
    const response: UpdateReviewResponse = { results };
    return c.json(response);
  });

  app.get("/:id/review-activity", async (c) => {
    const id = pathId(c, "id", "session");
    const rows = await listReviewActivity(prisma, id);
    if (!rows) throw notFound("session", id);
    const body: ReviewActivityResponse = {
      activities: rows.map((a) => ({
        id: a.id,
        actor: a.actor,
        action: a.action,
        from_status: a.fromStatus,
        to_status: a.toStatus,
        quality_rating: a.qualityRating,
        note: a.note,
        investigation_feedback: a.investigationFeedback,
        created_at: a.createdAt.toISOString(),
      })),
    };
    return c.json(body);
  });

  app.get("/triage/:group", async (c) => {
    const parsed = TriageGroupSchema.safeParse(c.req.param("group"));
    if (!parsed.success) {
      throw new HttpError(
        400,
        "validation_failed",
        `unknown triage group '${c.req.param("group")}'; one of ${TriageGroupSchema.options.join(", ")}`,
        { groups: TriageGroupSchema.options },
      );
    }
    const q = readQuery(c, TriageQuerySchema);
    const page = await listTriageGroup(prisma, parsed.data, {
      ...(q.assignee === undefined ? {} : { assignee: q.assignee }),
      projects: visibleProjects(deps, c),
      page: q.page,
      pageSize: q.page_size,
    });
    const body: TriageGroupResponse = {
      group: parsed.data,
      count: page.total,
      page: q.page,
      page_size: q.page_size,
      total_pages: Math.ceil(page.total / q.page_size),
      sessions: page.items.map((s) =>
        presentSummary(s, page.stats.get(s.id) ?? EMPTY_SESSION_STATS),
      ),
    };
    return c.json(body);
  });

  return app;
}
