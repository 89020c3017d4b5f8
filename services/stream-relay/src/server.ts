import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import type { Identity } from "@tarsy/authz";
import { builtinAuthorization } from "@tarsy/config";
import {
  createMetrics,
  createOpsRoutes,
  type HealthChecks,
  type ReadinessChecks,
  type ServiceMetrics,
} from "@tarsy/metrics";
import type { Logger } from "@tarsy/runtime";
import { type WebSocket, WebSocketServer } from "ws";
import { type RelayAccess, SessionVisibility } from "./access.ts";
import { type ControlLimits, DEFAULT_CONTROL_LIMITS } from "./admission.ts";
import {
  CLOSE_POLICY_VIOLATION,
  ClientConnection,
  type ConnectionAccess,
  type ConnectionLimits,
} from "./connection.ts";
import type { EventLog } from "./event-log.ts";
import { SharedFeeds } from "./feeds.ts";
import { identityOf, isOriginAllowed } from "./origin.ts";
import { createProxyTrust, type ProxyTrust } from "./proxy-trust.ts";

export const WS_PATH = "/api/v1/ws";

/** Control-message limits are optional here (defaults: `DEFAULT_CONTROL_LIMITS`). */
export interface RelayOptions
  extends Omit<ConnectionLimits, keyof ControlLimits>,
    Partial<ControlLimits> {
  host: string;
  port: number;
  allowedOrigins: readonly string[];
  /** Interval of WebSocket pings; a peer that has not answered the previous one is dropped. */
  heartbeatMs: number;
  /** Largest frame a client may send. */
  maxFrameBytes: number;
  /** Served at `/metrics`; default: a registry of its own (tests). */
  metrics?: ServiceMetrics<"stream-relay">;
  /** What `/ready` checks (main: NATS); default: none, ready while listening (tests). */
  ready?: ReadinessChecks;
  /** What `/health` reports on (main: NATS, and the database when authorization uses one). */
  health?: HealthChecks;
  /**
   * Authentication and per-connection filtering; absent (or disabled) while authorization is
   * off, and then the relay checks nobody, as before authorization existed.
   */
  access?: RelayAccess;
  /**
   * Identity headers only from a trusted proxy (`authorization.trusted_proxies`): applied
   * while authorization is off too, so a spoofed user name is refused rather than recorded.
   * Default: the built-in `trusted_proxies` (loopback only).
   */
  proxyTrust?: ProxyTrust;
}

export interface Relay {
  readonly url: string;
  readonly connections: number;
  /** Number of channels this process reads from the event log now. */
  readonly feeds: number;
  /** Client actions waiting or running, summed over connections (each bounded by the burst). */
  readonly pendingActions: number;
  close(): Promise<void>;
}

export async function startRelay(
  log: EventLog,
  options: RelayOptions,
  logger: Logger,
): Promise<Relay> {
  const metrics = options.metrics ?? createMetrics("stream-relay", { processMetrics: false });
  // `/metrics`, `/health` and `/ready` on the relay's own port, as every ops server serves them.
  const ops = createOpsRoutes({
    registry: metrics.registry,
    ready: options.ready ?? {},
    health: options.health ?? {},
    logger: logger.child({ component: "ops" }),
  });
  const countFrame = (type: string) => metrics.wsFramesSent.inc({ type });
  const access = options.access?.authorizer.enabled ? options.access : null;
  const proxyTrust = options.proxyTrust ?? createProxyTrust(builtinAuthorization());
  const feeds = new SharedFeeds(
    log,
    logger.child({ component: "feeds" }),
    access ? access.projects : null,
  );
  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxFrameBytes });
  const clients = new Map<WebSocket, ClientConnection>();
  const d = DEFAULT_CONTROL_LIMITS;
  const limits: ConnectionLimits = {
    catchupLimit: options.catchupLimit,
    maxSubscriptions: options.maxSubscriptions,
    sendBufferLimitBytes: options.sendBufferLimitBytes,
    slowClientGraceMs: options.slowClientGraceMs,
    controlRatePerSec: options.controlRatePerSec ?? d.controlRatePerSec,
    controlBurst: options.controlBurst ?? d.controlBurst,
    controlViolationsBeforeClose:
      options.controlViolationsBeforeClose ?? d.controlViolationsBeforeClose,
    maxPendingCatchups: options.maxPendingCatchups ?? d.maxPendingCatchups,
  };
  const alive = new WeakSet<WebSocket>();

  const server: Server = createServer((req, res) => {
    if (ops.handle(req, res)) return;
    const path = req.url?.split("?")[0];
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { code: "not_found", message: `no route ${path}` } }));
  });

  const upgrade = async (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const reject = (status: string, error?: { code: string; message: string }) => {
      const body = error ? JSON.stringify({ error }) : "";
      const headers = error
        ? `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`
        : "";
      socket.end(`HTTP/1.1 ${status}\r\n${headers}Connection: close\r\n\r\n${body}`);
    };
    if (req.url?.split("?")[0] !== WS_PATH) return reject("404 Not Found");
    if (!isOriginAllowed(req, options.allowedOrigins)) {
      logger.warn({ origin: req.headers.origin }, "rejected WebSocket from foreign origin");
      metrics.wsUpgradesRejected.inc({ reason: "origin" });
      return reject("403 Forbidden");
    }
    const refuseUnidentified = (code: string, message: string) => {
      logger.warn({ code, remote_address: req.socket.remoteAddress }, "rejected WebSocket");
      metrics.wsUpgradesRejected.inc({ reason: code });
      access?.auditRefusal({
        status: 401,
        code,
        message,
        path: WS_PATH,
        remoteAddress: req.socket.remoteAddress,
      });
      return reject("401 Unauthorized", { code, message });
    };
    let identity: Identity | null = null;
    if (!access) {
      const untrusted = proxyTrust(req);
      if (untrusted) return refuseUnidentified(untrusted.code, untrusted.message);
    } else {
      let answer: Awaited<ReturnType<RelayAccess["identify"]>>;
      try {
        answer = await access.identify(req);
      } catch (err) {
        logger.error({ err }, "could not identify a WebSocket client");
        metrics.wsUpgradesRejected.inc({ reason: "unavailable" });
        const error = {
          code: "unavailable",
          message: "the caller could not be identified; try again",
        };
        access.auditRefusal({
          status: 503,
          ...error,
          path: WS_PATH,
          remoteAddress: req.socket.remoteAddress,
        });
        return reject("503 Service Unavailable", error);
      }
      if (!answer.ok) return refuseUnidentified(answer.code, answer.message);
      identity = answer.identity;
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit("connection", ws, req, identity));
  };
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    upgrade(req, socket, head).catch((err: unknown) => {
      logger.error({ err }, "WebSocket upgrade failed");
      socket.destroy();
    });
  });

  const connectionAccess = (identity: Identity | null): ConnectionAccess | null =>
    access && identity
      ? {
          visibility: new SessionVisibility(access.authorizer, identity),
          projects: access.projects,
          onFiltered: (reason) => metrics.wsFramesFiltered.inc({ reason }),
        }
      : null;

  wss.on("connection", (ws: WebSocket, req: IncomingMessage, identity: Identity | null) => {
    if (access && !identity) {
      ws.close(CLOSE_POLICY_VIOLATION, "unidentified");
      return;
    }
    const id = randomUUID();
    const user = identity ? identity.user : identityOf(req);
    const clientLogger = logger.child({ connection_id: id, user });
    const client = new ClientConnection(
      ws,
      id,
      user,
      feeds,
      log,
      limits,
      clientLogger,
      countFrame,
      connectionAccess(identity),
    );
    clients.set(ws, client);
    metrics.wsConnections.set(clients.size);
    alive.add(ws);
    clientLogger.info("client connected");
    ws.on("pong", () => alive.add(ws));
    ws.on("message", (data, isBinary) => client.handleMessage(data, isBinary));
    ws.on("error", (err) => clientLogger.warn({ err }, "socket error"));
    ws.on("close", (code, reason) => {
      clients.delete(ws);
      metrics.wsConnections.set(clients.size);
      void client.close();
      clientLogger.info({ code, reason: reason.toString() }, "client disconnected");
    });
  });

  const heartbeat = setInterval(() => {
    for (const ws of clients.keys()) {
      if (!alive.has(ws)) {
        logger.info("dropping client that missed a heartbeat");
        ws.terminate();
        continue;
      }
      alive.delete(ws);
      ws.ping();
    }
  }, options.heartbeatMs);
  heartbeat.unref();

  await new Promise<void>((resolve) => server.listen(options.port, options.host, resolve));
  const address = server.address() as AddressInfo;
  const url = `ws://${address.address.includes(":") ? `[${address.address}]` : address.address}:${address.port}${WS_PATH}`;
  logger.info({ url }, "relay listening");

  return {
    url,
    get connections() {
      return clients.size;
    },
    get feeds() {
      return feeds.size;
    },
    get pendingActions() {
      let total = 0;
      for (const client of clients.values()) total += client.pendingActions;
      return total;
    },
    async close() {
      ops.markStopping();
      clearInterval(heartbeat);
      for (const ws of clients.keys()) ws.close(1001, "server shutting down");
      await Promise.all([...clients.values()].map((c) => c.close()));
      await feeds.close();
      wss.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
