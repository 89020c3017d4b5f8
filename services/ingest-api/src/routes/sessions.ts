import { findChainForAlertType } from "@tarsy/config";
import {
  CancelRequestSchema,
  type CancelResponse,
  normalizeCancelReason,
  type SessionDeleteResponse,
  type SessionListQuery,
  SessionListQuerySchema,
  type SessionListResponse,
  SessionStatusSchema,
  TERMINAL_SESSION_STATUSES,
} from "@tarsy/contracts";
import {
  deleteSession,
  EMPTY_SESSION_STATS,
  getChatBySession,
  getOneSessionStats,
  getSession,
  getSessionDetail,
  hasOpenChatTurn,
  listActiveSessions,
  listSessionFilterOptions,
  listSessions,
  listSessionTimeline,
  type SessionSortColumn,
} from "@tarsy/db";
import { Hono } from "hono";
import { visibleProjects } from "../authz/guard.ts";
import { deliverEntry } from "../delivery.ts";
import type { IngestResources } from "../deps.ts";
import { conflict, HttpError, notFound, unavailable } from "../errors.ts";
import { etagOf, matchesEtag } from "../etag.ts";
import {
  presentDetail,
  presentStatistics,
  presentStatus,
  presentSummary,
  presentTimeline,
} from "../present.ts";
import { authorOf, pathId, readOptionalJson, readQuery } from "../request.ts";

/** A cancel body holds at most a 500-character reason. */
const CANCEL_BODY_LIMIT = 16 * 1024;

const SORT_COLUMNS: Record<SessionListQuery["sort_by"], SessionSortColumn> = {
  created_at: "createdAt",
  started_at: "startedAt",
  completed_at: "completedAt",
  status: "status",
  alert_type: "alertType",
};

/**
 * `?label=` names a label of the configured `label_maps` (exact, canonical spelling): a typo
 * is a 400, never an empty list that looks like "nothing is labelled so".
 */
function assertKnownLabel(deps: IngestResources, label: string): void {
  for (const map of deps.config.labelMaps.values()) {
    if (map.labels.some((spec) => spec.label === label)) return;
  }
  throw new HttpError(
    400,
    "validation_failed",
    `invalid query: label "${label}" is not in any configured label map`,
    { fields: [{ path: "label", message: "unknown label" }] },
  );
}

export function sessionRoutes(deps: IngestResources): Hono {
  const app = new Hono();
  const { prisma } = deps;

  app.get("/", async (c) => {
    const q = readQuery(c, SessionListQuerySchema);
    if (q.label !== undefined) assertKnownLabel(deps, q.label);
    const { items, stats, total } = await listSessions(prisma, {
      status: q.status,
      alertType: q.alert_type,
      chainId: q.chain_id,
      projects: visibleProjects(deps, c, q.project),
      search: q.search,
      reviewStatus: q.review_status,
      assignee: q.assignee,
      label: q.label,
      createdFrom: q.from ? new Date(q.from) : undefined,
      createdTo: q.to ? new Date(q.to) : undefined,
      sortBy: SORT_COLUMNS[q.sort_by],
      sortOrder: q.sort_order,
      page: q.page,
      pageSize: q.page_size,
    });
    const body: SessionListResponse = {
      sessions: items.map((s) => presentSummary(s, stats.get(s.id) ?? EMPTY_SESSION_STATS)),
      pagination: {
        page: q.page,
        page_size: q.page_size,
        total,
        total_pages: Math.ceil(total / q.page_size),
      },
    };
    return c.json(body);
  });

  app.get("/active", async (c) => {
    const { active, queued, stats } = await listActiveSessions(prisma, visibleProjects(deps, c));
    const present = (s: (typeof active)[number]) =>
      presentSummary(s, stats.get(s.id) ?? EMPTY_SESSION_STATS);
    return c.json({ active: active.map(present), queued: queued.map(present) });
  });

  app.get("/filter-options", async (c) => {
    const projects = visibleProjects(deps, c);
    const { alertTypes, chainIds, labels } = await listSessionFilterOptions(prisma, projects);
    return c.json({
      statuses: SessionStatusSchema.options,
      alert_types: alertTypes,
      chain_ids: chainIds,
      projects: projects ?? [...deps.access.authorizer.projects],
      labels,
    });
  });

  app.get("/:id", async (c) => {
    const id = pathId(c, "id", "session");
    const found = await getSessionDetail(prisma, id);
    if (!found) throw notFound("session", id);
    const chain = findChainForAlertType(deps.config, found.session.alertType);
    const chatEnabled =
      deps.config.chains.get(found.session.chainId)?.chat.enabled ?? chain?.chat.enabled ?? false;
    return c.json(
      presentDetail(found.session, found.stages, found.chat, chatEnabled, found.stats, found.costs),
    );
  });

  app.get("/:id/summary", async (c) => {
    const id = pathId(c, "id", "session");
    const session = await getSession(prisma, id);
    if (!session) throw notFound("session", id);
    return c.json(presentStatistics(session, await getOneSessionStats(prisma, id)));
  });

  // The polling surface: a strong ETag of exactly the body; an unchanged one is a 304.
  app.get("/:id/status", async (c) => {
    const id = pathId(c, "id", "session");
    const session = await getSession(prisma, id);
    if (!session) throw notFound("session", id);
    const body = JSON.stringify(presentStatus(session));
    const etag = etagOf(body);
    c.header("ETag", etag);
    c.header("Cache-Control", "no-cache");
    if (matchesEtag(c.req.header("if-none-match"), etag)) return c.body(null, 304);
    return c.body(body, 200, { "content-type": "application/json" });
  });

  app.get("/:id/timeline", async (c) => {
    const id = pathId(c, "id", "session");
    if (!(await getSession(prisma, id))) throw notFound("session", id);
    return c.json(presentTimeline(id, await listSessionTimeline(prisma, id)));
  });

  // Who cancels is the caller's identity; why is the optional body's `reason` (ADR-0032).
  app.post("/:id/cancel", async (c) => {
    const id = pathId(c, "id", "session");
    const request = await readOptionalJson(c, CancelRequestSchema, {
      limit: CANCEL_BODY_LIMIT,
      maxDepth: deps.settings.maxJsonDepth,
    });
    const reason = normalizeCancelReason(request?.reason);
    const session = await getSession(prisma, id);
    if (!session) throw notFound("session", id);
    if (TERMINAL_SESSION_STATUSES.includes(session.status)) {
      const chat = await getChatBySession(prisma, id);
      if (!chat || !(await hasOpenChatTurn(prisma, chat.id))) {
        throw conflict(`session ${id} is ${session.status} and has no chat answer running`, {
          status: session.status,
        });
      }
    }
    try {
      await deps.bus.publish("cancelRequested", {
        v: 1,
        session_id: id,
        requested_by: authorOf(c),
        ...(reason !== null && { reason }),
        requested_at: (deps.clock ? deps.clock() : new Date()).toISOString(),
      });
    } catch (err) {
      throw unavailable("the message bus is unavailable; cancel was not sent, retry", err);
    }
    deps.logger.info({ session_id: id, reason }, "cancel requested");
    const body: CancelResponse = { session_id: id, status: "cancel_requested" };
    return c.json(body, 202);
  });

  // Soft delete: gone from every list and lookup; the retention job erases it later.
  app.delete("/:id", async (c) => {
    const id = pathId(c, "id", "session");
    const result = await deleteSession(prisma, id);
    switch (result.outcome) {
      case "not_found":
        throw notFound("session", id);
      case "active":
        throw new HttpError(
          409,
          "session_active",
          `session ${id} is ${result.status}; cancel it or wait for it to end before deleting it`,
          { status: result.status },
        );
      case "deleted":
        break;
      default:
        return result satisfies never;
    }
    // Committed with its outbox row: published now, or by the background relay if NATS is down.
    await deliverEntry(deps, result.event).catch((err: unknown) =>
      deps.logger.warn({ err, session_id: id }, "session.deleted left for the outbox relay"),
    );
    deps.logger.info({ session_id: id }, "session deleted");
    const body: SessionDeleteResponse = {
      session_id: id,
      deleted_at: result.deletedAt.toISOString(),
    };
    return c.json(body);
  });

  return app;
}
