import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type Logger, withTimeout } from "@tarsy/runtime";
import type { Registry } from "prom-client";

/** Resolves when the dependency is usable; throws (or rejects) with the reason when not. */
export type ReadinessCheck = () => Promise<unknown>;
export type ReadinessChecks = Readonly<Record<string, ReadinessCheck>>;

export interface CheckResult {
  status: "ok" | "failing";
  latency_ms: number;
  error?: string;
}

export interface ReadinessReport {
  status: "ready" | "not_ready";
  checks: Record<string, CheckResult>;
}

/**
 * One check of `/health`: `check` resolves (optionally with details to show) when the part is
 * fine; `impact` is what its failure makes the process (default `unhealthy`).
 */
export interface HealthCheckSpec {
  check: () => Promise<unknown>;
  impact?: "unhealthy" | "degraded";
}
export type HealthChecks = Readonly<Record<string, HealthCheckSpec>>;

export interface HealthEntry {
  status: "healthy" | "unhealthy" | "degraded";
  latency_ms: number;
  message?: string;
  details?: unknown;
}

/** `GET /health`, the Go TARSy's shape: `status`, `version`, `checks`. */
export interface HealthReport {
  status: "healthy" | "degraded" | "unhealthy";
  version: string;
  checks: Record<string, HealthEntry>;
}

/** The version every TARSy process reports. */
export const TARSY_VERSION = "0.1.0";

export interface OpsRoutesOptions {
  registry: Registry;
  /** Reported by `/health` (default `TARSY_VERSION`). */
  version?: string;
  /** What `/health` reports on (default none until `setHealth`). */
  health?: HealthChecks;
  /**
   * What the process needs to do its work (`/ready`). Omitted: not ready ("starting") until
   * `setReadiness` gives the checks, for a server started before its resources.
   */
  ready?: ReadinessChecks;
  logger: Logger;
  /** Longest one check may take before it counts as failing, default 2 s. */
  checkTimeoutMs?: number;
}

export interface OpsServerOptions extends OpsRoutesOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
}

/** An HTTP reply, written by whichever server carries the routes. */
export interface OpsReply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * `GET /metrics`, `/health` and `/ready` of one process, for the ops server or for a
 * service's own HTTP server (stream-relay's, ingest-api's) to carry.
 */
export interface OpsRoutes {
  /** The reply to an ops route; undefined when the request is for none of them. */
  reply(method: string, path: string): Promise<OpsReply | undefined>;
  /** Answers an ops route on a node:http server; false (nothing written) for any other request. */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  /** Replaces the readiness checks (e.g. once the resources they probe exist). */
  setReadiness(checks: ReadinessChecks): void;
  /** Replaces the checks `/health` reports on. */
  setHealth(checks: HealthChecks): void;
  /** `/ready` fails from now on (shutdown has begun); `/health` keeps answering. */
  markStopping(): void;
}

export interface OpsServer extends Omit<OpsRoutes, "reply" | "handle"> {
  /** e.g. `http://127.0.0.1:9464`. */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

const STARTING: ReadinessChecks = {
  startup: () => Promise.reject(new Error("starting")),
};
const STOPPING: ReadinessChecks = {
  shutdown: () => Promise.reject(new Error("shutting down")),
};

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

async function runCheck(check: ReadinessCheck, timeoutMs: number): Promise<CheckResult> {
  const started = performance.now();
  const latency = () => Math.round((performance.now() - started) * 10) / 10;
  try {
    await withTimeout(check(), timeoutMs, () => new Error(`no answer in ${timeoutMs} ms`));
    return { status: "ok", latency_ms: latency() };
  } catch (err) {
    return { status: "failing", latency_ms: latency(), error: message(err) };
  }
}

/** Runs every check at once; ready when all pass. */
export async function checkReadiness(
  checks: ReadinessChecks,
  timeoutMs = 2_000,
): Promise<ReadinessReport> {
  const entries = await Promise.all(
    Object.entries(checks).map(async ([name, check]) => [name, await runCheck(check, timeoutMs)]),
  );
  const results = Object.fromEntries(entries) as Record<string, CheckResult>;
  const ready = Object.values(results).every((r) => r.status === "ok");
  return { status: ready ? "ready" : "not_ready", checks: results };
}

/**
 * Runs every health check at once. `healthy` when all pass; else `unhealthy` when a check
 * whose impact is `unhealthy` fails, `degraded` otherwise.
 */
export async function checkHealth(
  checks: HealthChecks,
  version: string,
  timeoutMs = 2_000,
): Promise<HealthReport> {
  const entries = await Promise.all(
    Object.entries(checks).map(async ([name, spec]): Promise<[string, HealthEntry]> => {
      const started = performance.now();
      const latency = () => Math.round((performance.now() - started) * 10) / 10;
      try {
        const details = await withTimeout(
          spec.check(),
          timeoutMs,
          () => new Error(`no answer in ${timeoutMs} ms`),
        );
        const entry: HealthEntry = { status: "healthy", latency_ms: latency() };
        if (details !== undefined && details !== null && typeof details === "object") {
          entry.details = details;
        }
        return [name, entry];
      } catch (err) {
        const status = spec.impact === "degraded" ? "degraded" : "unhealthy";
        return [name, { status, latency_ms: latency(), message: message(err) }];
      }
    }),
  );
  const results = Object.fromEntries(entries);
  const statuses = entries.map(([, e]) => e.status);
  const status = statuses.includes("unhealthy")
    ? "unhealthy"
    : statuses.includes("degraded")
      ? "degraded"
      : "healthy";
  return { status, version, checks: results };
}

function json(status: number, body: unknown): OpsReply {
  return {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store" },
    body: JSON.stringify(body),
  };
}

function send(res: ServerResponse, reply: OpsReply): void {
  res.writeHead(reply.status, reply.headers);
  res.end(reply.body);
}

const OPS_PATHS: ReadonlySet<string> = new Set(["/metrics", "/health", "/ready"]);

/** The path of a request URL, without its query. */
function pathOf(req: IncomingMessage): string {
  return (req.url ?? "/").split("?")[0] ?? "/";
}

/**
 * The ops routes: `GET /metrics` (Prometheus text format), `GET /health` and `GET /ready`
 * (readiness: the given checks). `/health` is the liveness probe: it answers 200 whenever the
 * process answers, its body saying how the process's parts are (the Go TARSy's `status`,
 * `version`, `checks`: `healthy`, `degraded` or `unhealthy`), so a dependency's outage shows
 * there without getting the pod restarted.
 */
export function createOpsRoutes(options: OpsRoutesOptions): OpsRoutes {
  const { registry, logger } = options;
  const timeoutMs = options.checkTimeoutMs ?? 2_000;
  const version = options.version ?? TARSY_VERSION;
  let checks: ReadinessChecks = options.ready ?? STARTING;
  let health: HealthChecks = options.health ?? {};

  const reply = async (method: string, path: string): Promise<OpsReply | undefined> => {
    if (method !== "GET" && method !== "HEAD") return undefined;
    switch (path) {
      case "/metrics":
        return {
          status: 200,
          headers: { "content-type": registry.contentType },
          body: await registry.metrics(),
        };
      case "/health":
        return json(200, await checkHealth(health, version, timeoutMs));
      case "/ready": {
        const report = await checkReadiness(checks, timeoutMs);
        return json(report.status === "ready" ? 200 : 503, report);
      }
      default:
        return undefined;
    }
  };

  return {
    reply,
    handle(req, res) {
      const path = pathOf(req);
      const method = req.method ?? "GET";
      if (!OPS_PATHS.has(path) || (method !== "GET" && method !== "HEAD")) return false;
      reply(method, path).then(
        (answer) => send(res, answer ?? json(404, notFound(method, path))),
        (err: unknown) => {
          logger.error({ err, path }, "ops request failed");
          if (!res.headersSent) {
            send(res, json(500, { error: { code: "internal", message: message(err) } }));
          } else {
            res.destroy();
          }
        },
      );
      return true;
    },
    setReadiness(next) {
      checks = next;
    },
    setHealth(next) {
      health = next;
    },
    markStopping() {
      checks = STOPPING;
    },
  };
}

function notFound(method: string, path: string) {
  return { error: { code: "not_found", message: `no route for ${method} ${path}` } };
}

/**
 * The small HTTP server of a process without an HTTP API of its own: the ops routes
 * (`createOpsRoutes`) on a port of their own. Anything else is a 404.
 */
export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  const routes = createOpsRoutes(options);
  const server = createServer((req, res) => {
    if (!routes.handle(req, res)) send(res, json(404, notFound(req.method ?? "GET", pathOf(req))));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(":") ? `[${address}]` : address;
  const url = `http://${host}:${port}`;
  options.logger.info(
    { host: address, port, url },
    "ops server listening (/metrics, /health, /ready)",
  );

  return {
    url,
    port,
    setReadiness: routes.setReadiness,
    setHealth: routes.setHealth,
    markStopping: routes.markStopping,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
