import { serveStatic } from "@hono/node-server/serve-static";
import { createMetrics, createOpsRoutes } from "@tarsy/metrics";
import { natsReadiness } from "@tarsy/metrics/bus";
import { type Context, Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { socketAddress } from "./access.ts";
import { guard } from "./authz/guard.ts";
import type { IngestResources } from "./deps.ts";
import { HttpError } from "./errors.ts";
import { checkHealth } from "./health.ts";
import { buildOpenApi } from "./openapi.ts";
import { accessRoutes } from "./routes/access.ts";
import { actionRoutes } from "./routes/actions.ts";
import { alertmanagerRoutes } from "./routes/alertmanager.ts";
import { alertRoutes } from "./routes/alerts.ts";
import { chatRoutes } from "./routes/chat.ts";
import { deadLetterRoutes } from "./routes/dead-letters.ts";
import { memoryRoutes, sessionMemoryRoutes } from "./routes/memories.ts";
import { notificationRoutes } from "./routes/notifications.ts";
import { reviewRoutes } from "./routes/review.ts";
import { runbookRoutes } from "./routes/runbooks.ts";
import { scoreRoutes } from "./routes/scores.ts";
import { sessionRoutes } from "./routes/sessions.ts";
import { systemRoutes } from "./routes/system.ts";
import { traceRoutes } from "./routes/trace.ts";
import { usageRoutes } from "./routes/usage.ts";
import { securityHeaders } from "./secure-headers.ts";

const ALERTMANAGER_PATH = "/api/v1/alerts/alertmanager";

/** The whole HTTP API as a Hono app; `app.request()` in tests, @hono/node-server in main. */
export function createApp(deps: IngestResources): Hono {
  const metrics = deps.metrics ?? createMetrics("ingest-api", { processMetrics: false });
  const app = new Hono();
  const log = deps.logger.child({ component: "http" });

  app.onError((err, c) => {
    if (err instanceof HttpError) {
      if (err.status >= 500) log.warn({ err: err.cause ?? err, path: c.req.path }, err.message);
      return c.json(err.toBody(), err.status);
    }
    log.error({ err, method: c.req.method, path: c.req.path }, "unhandled error");
    return c.json({ error: { code: "internal", message: "internal server error" } }, 500);
  });
  app.notFound((c) =>
    c.json(
      { error: { code: "not_found", message: `no route for ${c.req.method} ${c.req.path}` } },
      404,
    ),
  );

  // The Content-Security-Policy and the other security headers, on every response (first, so
  // that it wraps every route, the dashboard's files and the error responses).
  app.use("*", securityHeaders(deps.settings));

  const openapi = buildOpenApi(deps.settings.version);
  app.get("/api/v1/openapi.json", (c) => c.json(openapi));
  // `/metrics` and `/ready` as every ops server serves them; `/health` is the API's own
  // (`HealthResponse`: dependencies, MCP servers and warnings, for the dashboard).
  const ops = createOpsRoutes({
    registry: metrics.registry,
    ready: deps.ready ?? { nats: natsReadiness(deps.bus) },
    logger: log,
  });
  const serveOps = async (c: Context) => {
    const reply = await ops.reply(c.req.method, c.req.path);
    if (!reply) return c.notFound();
    return c.body(reply.body, reply.status as ContentfulStatusCode, reply.headers);
  };
  app.get("/metrics", serveOps);
  app.get("/ready", serveOps);
  app.get("/health", async (c) => {
    const health = await checkHealth(deps);
    return c.json(health, health.status === "healthy" ? 200 : 503);
  });

  // Who is calling and whether they may (`authz/rules.ts`), for every API route but the
  // Alertmanager receiver (which has credentials of its own); denials are audited.
  app.use("/api/*", guard(deps, deps.remoteAddressOf ?? socketAddress));
  app.route(ALERTMANAGER_PATH, alertmanagerRoutes(deps, metrics.alertsReceived));
  app.route("/api/v1/alerts", alertRoutes(deps, metrics.alertsReceived));
  app.route("/api/v1/sessions", sessionRoutes(deps));
  app.route("/api/v1/sessions", traceRoutes(deps));
  app.route("/api/v1/sessions", chatRoutes(deps));
  app.route("/api/v1/sessions", scoreRoutes(deps));
  app.route("/api/v1/sessions", notificationRoutes(deps));
  app.route("/api/v1/sessions", reviewRoutes(deps));
  app.route("/api/v1/sessions", sessionMemoryRoutes(deps));
  app.route("/api/v1/memories", memoryRoutes(deps));
  app.route("/api/v1/actions", actionRoutes(deps, metrics));
  app.route("/api/v1/system", systemRoutes(deps));
  app.route("/api/v1/runbooks", runbookRoutes(deps));
  app.route("/api/v1/usage", usageRoutes(deps));
  app.route("/api/v1", accessRoutes(deps));
  app.route("/api/v1/dead-letters", deadLetterRoutes(deps));

  // The dashboard's runtime settings, then its build: files as they are, index.html for
  // client-side routes.
  app.get("/config.json", (c) =>
    c.json(deps.settings.wsUrl ? { ws_url: deps.settings.wsUrl } : {}),
  );
  const staticDir = deps.settings.staticDir;
  if (staticDir) {
    app.use("*", async (c, next) => {
      if (c.req.path.startsWith("/api/")) return next();
      return serveStatic({ root: staticDir })(c, next);
    });
    app.get("*", async (c, next) => {
      if (c.req.path.startsWith("/api/")) return next();
      return serveStatic({ root: staticDir, path: "index.html" })(c, next);
    });
  }
  return app;
}
