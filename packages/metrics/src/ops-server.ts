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

export interface OpsServerOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  registry: Registry;
  /**
   * What the process needs to do its work (`/ready`). Omitted: not ready ("starting") until
   * `setReadiness` gives the checks, for a server started before its resources.
   */
  ready?: ReadinessChecks;
  logger: Logger;
  /** Longest one check may take before it counts as failing, default 2 s. */
  checkTimeoutMs?: number;
}

export interface OpsServer {
  /** e.g. `http://127.0.0.1:9464`. */
  readonly url: string;
  readonly port: number;
  /** Replaces the readiness checks (e.g. once the resources they probe exist). */
  setReadiness(checks: ReadinessChecks): void;
  /** `/ready` fails from now on (shutdown has begun); `/health` keeps answering. */
  markStopping(): void;
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

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(JSON.stringify(body));
}

/**
 * The small HTTP server of a process without an HTTP API of its own: `GET /metrics`
 * (Prometheus text format), `GET /health` (liveness: the process answers; never asks a
 * dependency) and `GET /ready` (readiness: the given checks). Anything else is a 404.
 */
export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  const { registry, logger } = options;
  const timeoutMs = options.checkTimeoutMs ?? 2_000;
  let checks: ReadinessChecks = options.ready ?? STARTING;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? "/").split("?")[0];
    const route = req.method === "GET" || req.method === "HEAD" ? path : undefined;
    switch (route) {
      case "/metrics": {
        const text = await registry.metrics();
        res.writeHead(200, { "content-type": registry.contentType });
        res.end(text);
        return;
      }
      case "/health":
        sendJson(res, 200, { status: "ok" });
        return;
      case "/ready": {
        const report = await checkReadiness(checks, timeoutMs);
        sendJson(res, report.status === "ready" ? 200 : 503, report);
        return;
      }
      default:
        sendJson(res, 404, {
          error: { code: "not_found", message: `no route for ${req.method} ${path}` },
        });
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      logger.error({ err, path: req.url }, "ops request failed");
      if (!res.headersSent) {
        sendJson(res, 500, { error: { code: "internal", message: message(err) } });
      } else {
        res.destroy();
      }
    });
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
  logger.info({ host: address, port, url }, "ops server listening (/metrics, /health, /ready)");

  return {
    url,
    port,
    setReadiness(next) {
      checks = next;
    },
    markStopping() {
      checks = STOPPING;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
