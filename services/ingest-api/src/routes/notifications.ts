import type { SessionNotificationsResponse } from "@tarsy/contracts";
import { getSession, listSessionDeliveries } from "@tarsy/db";
import { Hono } from "hono";
import type { IngestResources } from "../deps.ts";
import { notFound } from "../errors.ts";
import { presentDelivery } from "../present.ts";
import { pathId } from "../request.ts";

/**
 * `GET /api/v1/sessions/:id/notifications`: whether Slack and each webhook were told of the
 * session, and if not, why (the notifier's delivery records).
 */
export function notificationRoutes(deps: IngestResources): Hono {
  const app = new Hono();

  app.get("/:id/notifications", async (c) => {
    const sessionId = pathId(c, "id", "session");
    if (!(await getSession(deps.prisma, sessionId))) throw notFound("session", sessionId);
    const deliveries = await listSessionDeliveries(deps.prisma, sessionId);
    const body: SessionNotificationsResponse = {
      session_id: sessionId,
      deliveries: deliveries.map(presentDelivery),
    };
    return c.json(body);
  });

  return app;
}
