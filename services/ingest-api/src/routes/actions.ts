import {
  ActionDecisionBodySchema,
  type ActionList,
  ActionListQuerySchema,
  type Action as ActionView,
} from "@tarsy/contracts";
import {
  actionAudit,
  actionView,
  decideAction,
  getAction,
  getSession,
  listActions,
} from "@tarsy/db";
import { type ActionDecisionMetrics, recordActionDecision } from "@tarsy/metrics";
import type { Context } from "hono";
import { Hono } from "hono";
import { identityOf } from "../access.ts";
import { noteAudit } from "../authz/audit.ts";
import { visibleProjects } from "../authz/guard.ts";
import { deliverNow } from "../delivery.ts";
import type { IngestResources } from "../deps.ts";
import { HttpError } from "../errors.ts";
import { authorOf, pathId, readOptionalJson, readQuery } from "../request.ts";

const DECISION_BODY_LIMIT = 16 * 1024;

/**
 * Action requests (issue #30): action agents' mutating calls, each waiting for a person's
 * decision (unless its agent's `approval` is `auto`). `GET /` lists them (`?status=pending`),
 * `GET /:id` shows one, `GET /:id/audit` its append-only record, and `POST /:id/approve` or
 * `/deny` (with an optional comment) decides it once: the decision resumes the execution.
 * Deciding needs the `approve` action on the session's project; the decider is recorded.
 */
export function actionRoutes(deps: IngestResources, metrics: ActionDecisionMetrics): Hono {
  const app = new Hono();
  const { prisma } = deps;
  const { authorizer } = deps.access;

  /** The request, when the caller may see its session (else 404, as a missing one). */
  const visible = async (c: Context, id: string) => {
    const action = await getAction(prisma, id);
    const session = action ? await getSession(prisma, action.sessionId) : null;
    if (
      !action ||
      !session ||
      (authorizer.enabled &&
        !authorizer.can(identityOf(c), "get", session.project, action.sessionId))
    ) {
      throw new HttpError(404, "not_found", `action ${id} not found`);
    }
    noteAudit(c, { sessionId: action.sessionId, project: session.project });
    return { action, session };
  };

  app.get("/", async (c) => {
    const query = readQuery(c, ActionListQuerySchema);
    const projects = visibleProjects(deps, c);
    const rows = await listActions(prisma, {
      ...(query.status ? { status: query.status } : {}),
      ...(query.session_id ? { sessionId: query.session_id.toLowerCase() } : {}),
      ...(projects ? { projects } : {}),
      limit: query.limit,
    });
    return c.json({ actions: rows.map((r) => actionView(r, r.session)) } satisfies ActionList);
  });

  app.get("/:id", async (c) => {
    const { action, session } = await visible(c, pathId(c, "id", "action"));
    return c.json(actionView(action, session) satisfies ActionView);
  });

  app.get("/:id/audit", async (c) => {
    const { action } = await visible(c, pathId(c, "id", "action"));
    return c.json({ entries: await actionAudit(prisma, action.id) });
  });

  const decide = (status: "approved" | "denied") => async (c: Context) => {
    const id = pathId(c, "id", "action");
    const body =
      (await readOptionalJson(c, ActionDecisionBodySchema, {
        limit: DECISION_BODY_LIMIT,
        maxDepth: deps.settings.maxJsonDepth,
      })) ?? {};
    const { session } = await visible(c, id);
    if (authorizer.enabled && !authorizer.can(identityOf(c), "approve", session.project, id)) {
      noteAudit(c, { reason: `may not approve in project ${session.project}` });
      throw new HttpError(
        403,
        "forbidden",
        `you may not decide actions in project ${session.project} (the approve action)`,
        { project: session.project },
      );
    }
    const actor = authorOf(c);
    const result = await decideAction(prisma, id, {
      status,
      actor,
      comment: body.comment?.trim() || null,
      fourEyes: deps.config.defaults.approval.four_eyes,
      at: new Date(),
    });
    switch (result.outcome) {
      case "not_found":
        throw new HttpError(404, "not_found", `action ${id} not found`);
      case "four_eyes":
        throw new HttpError(
          403,
          "four_eyes",
          `four eyes: ${actor} submitted this alert and may not approve its actions; another person must`,
        );
      case "already_decided":
        throw new HttpError(
          409,
          "action_decided",
          `action ${id} is ${result.action.status} already${result.action.decidedBy ? ` (by ${result.action.decidedBy})` : ""}`,
          { status: result.action.status },
        );
      case "decided":
        break;
    }
    const { action } = result;
    recordActionDecision(metrics, status, action.requestedAt, action.decidedAt ?? new Date());
    // The decision is committed: publish its event and the resumption now (the relay would).
    await deliverNow(
      deps,
      result.events.map((e) => e.msgId),
    ).catch((err: unknown) => deps.logger.warn({ err }, "decision published by the relay later"));
    deps.logger.info(
      { action_id: id, session_id: result.action.sessionId, status, actor },
      "action request decided",
    );
    return c.json(actionView(result.action, session) satisfies ActionView);
  };
  app.post("/:id/approve", decide("approved"));
  app.post("/:id/deny", decide("denied"));

  return app;
}
