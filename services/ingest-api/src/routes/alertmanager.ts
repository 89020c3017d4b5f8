import { timingSafeEqual } from "node:crypto";
import { AlertmanagerWebhookSchema } from "@tarsy/contracts";
import { Hono, type MiddlewareHandler } from "hono";
import { type AlertsReceived, countFailedAlerts } from "../alert-metrics.ts";
import { ingestNotification } from "../alertmanager-intake.ts";
import { receiverOf } from "../authz/receiver.ts";
import type { AlertmanagerAuth, IngestResources } from "../deps.ts";
import { HttpError } from "../errors.ts";
import { refuseIfPendingLimited } from "../pending-limit.ts";
import { authorOf, readJson } from "../request.ts";

/** Alertmanager's webhook receiver (`webhook_configs[].url: …/api/v1/alerts/alertmanager`). */
export function alertmanagerRoutes(deps: IngestResources, received: AlertsReceived): Hono {
  const app = new Hono();
  const webhookAuth = requireAuth(deps.settings.alertmanager.auth);
  const receiver = receiverOf(deps, webhookAuth);
  app.post("/", countFailedAlerts(received, "alertmanager"), receiver.authenticate, async (c) => {
    // A group notification carries many alerts: allow several alerts' worth of body.
    const hook = await readJson(c, AlertmanagerWebhookSchema, {
      limit: deps.settings.maxAlertBytes * 10,
      maxDepth: deps.settings.maxJsonDepth,
      precheck: (value) => capAlerts(value, deps.settings.alertmanager.maxAlerts),
    });
    const who = receiver.of(c);
    receiver.refuseUnplaceable(c, who, [
      ...hook.alerts.map((a) => ({ fingerprint: a.fingerprint, labels: a.labels })),
      { labels: { ...hook.commonLabels, ...hook.groupLabels } },
    ]);
    const author =
      who.identity.source === "token"
        ? who.identity.user
        : c.req.header("x-forwarded-user")
          ? authorOf(c)
          : "alertmanager";
    const result = await ingestNotification(
      deps,
      hook,
      { author, place: (labels) => receiver.place(who, labels) },
      c.req.raw.signal,
    );
    receiver.audit(c, who, result);
    // Per alert: a group session investigates every fingerprint it names.
    const accepted = result.sessions_created.reduce((n, s) => n + s.fingerprints.length, 0);
    if (accepted > 0) received.inc({ source: "alertmanager", status: "accepted" }, accepted);
    if (result.alerts_skipped.length > 0) {
      received.inc({ source: "alertmanager", status: "skipped" }, result.alerts_skipped.length);
    }
    deps.logger.info(
      {
        group_key: hook.groupKey,
        created: result.sessions_created.length,
        skipped: result.alerts_skipped.length,
        truncated: hook.truncatedAlerts,
      },
      "alertmanager notification processed",
    );
    refuseIfPendingLimited(c, result);
    return c.json(result, 200);
  });
  return app;
}

/**
 * A notification carrying more than `limit` alerts is rejected whole (413) before any is
 * validated or stored: each alert may start an investigation, so a flood is refused rather
 * than half-processed. Alertmanager's `max_alerts` keeps notifications under the cap.
 */
function capAlerts(value: unknown, limit: number): void {
  const alerts = (value as { alerts?: unknown } | null)?.alerts;
  if (!Array.isArray(alerts) || alerts.length <= limit) return;
  throw new HttpError(
    413,
    "payload_too_large",
    `the notification carries ${alerts.length} alerts; at most ${limit} (set max_alerts in Alertmanager's webhook_config)`,
    { limit, count: alerts.length },
  );
}

const same = (a: string, b: string): boolean => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/** Bearer or basic auth as Alertmanager's `http_config` sends it; none when not configured. */
export function requireAuth(auth: AlertmanagerAuth): MiddlewareHandler {
  return async (c, next) => {
    if (auth.kind === "none") return next();
    const header = c.req.header("authorization") ?? "";
    const [scheme = "", value = ""] = header.split(/\s+/, 2);
    let ok = false;
    switch (auth.kind) {
      case "bearer":
        ok = scheme.toLowerCase() === "bearer" && same(value, auth.token);
        break;
      case "basic": {
        const decoded = Buffer.from(value, "base64").toString("utf8");
        ok = scheme.toLowerCase() === "basic" && same(decoded, `${auth.username}:${auth.password}`);
        break;
      }
      default:
        auth satisfies never;
    }
    if (ok) return next();
    c.header("WWW-Authenticate", auth.kind === "bearer" ? "Bearer" : 'Basic realm="tarsy"');
    throw new HttpError(401, "unauthorized", "missing or invalid credentials for the webhook");
  };
}
