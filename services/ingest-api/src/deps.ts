import type { TokenSeal } from "@tarsy/authz";
import type { Bus } from "@tarsy/bus";
import type { TarsyConfig } from "@tarsy/config";
import type { McpHealthReply, McpServerToolsReply, McpWarningsReply } from "@tarsy/contracts";
import type { PrismaClient } from "@tarsy/db";
import type { MaskingService } from "@tarsy/masking";
import type { ReadinessChecks, ServiceMetrics } from "@tarsy/metrics";
import type { RunbookClient } from "@tarsy/runbooks";
import type { Logger } from "@tarsy/runtime";
import type { Context } from "hono";
import type { AccessControl } from "./access.ts";

/** The mcp-gateway's read-only NATS API, as ingest-api uses it. */
export interface GatewayClient {
  health(): Promise<McpHealthReply>;
  warnings(): Promise<McpWarningsReply>;
  serverTools(): Promise<McpServerToolsReply>;
}

/** grpc.health.v1 status of llm-service (`SERVING` is healthy). */
export type LlmHealthCheck = () => Promise<string>;

export type AlertmanagerAuth =
  | { kind: "none" }
  | { kind: "bearer"; token: string }
  | { kind: "basic"; username: string; password: string };

export interface AlertmanagerSettings {
  /** A firing alert whose fingerprint was investigated this recently starts nothing new. */
  dedupeWindowMs: number;
  /** Label whose value is the alert type (default `alertname`). */
  alertTypeLabel: string;
  /** One session per alert (default) or one per group notification. */
  mode: "per_alert" | "per_group";
  auth: AlertmanagerAuth;
  /** Most alerts one notification may carry; more is a 413 before anything is stored. */
  maxAlerts: number;
  /** Annotation whose value is the alert's runbook URL (default `runbook_url`). */
  runbookAnnotation: string;
}

export interface IngestSettings {
  /** Largest alert `data` accepted, in bytes of its UTF-8 JSON/text (default 1 MiB). */
  maxAlertBytes: number;
  /** Deepest nesting of arrays/objects in a JSON body (default 64). */
  maxJsonDepth: number;
  /** How long a NATS publish may take before the request fails with 503. */
  publishTimeoutMs: number;
  /** How long a request to the mcp-gateway or llm-service may take. */
  dependencyTimeoutMs: number;
  alertmanager: AlertmanagerSettings;
  /** A built dashboard to serve at `/` (index.html fallback for client routes). */
  staticDir?: string;
  /** The stream relay's WebSocket URL, for the dashboard's `/config.json` (default: same origin). */
  wsUrl?: string;
  version: string;
}

export interface IngestResources {
  prisma: PrismaClient;
  bus: Bus;
  config: TarsyConfig;
  masking: MaskingService;
  /** Runbook URL checks (`system.runbooks.allowed_domains`) and the runbook listing. */
  runbooks: RunbookClient;
  /** Absent when no gateway is reachable in this deployment (health reports not_configured). */
  gateway?: GatewayClient;
  llmHealth?: LlmHealthCheck;
  logger: Logger;
  clock?: () => Date;
  settings: IngestSettings;
  /** Served at `/metrics`; default: a registry of its own (tests). */
  metrics?: ServiceMetrics<"ingest-api">;
  /** What `/ready` checks (main: NATS and Postgres); default: NATS. */
  ready?: ReadinessChecks;
  /** Identity and authorization (`authorization` in tarsy.yaml). */
  access: AccessControl;
  /**
   * Seals the submitting user's bearer token onto the session (or chat message) for MCP
   * servers with per-user credentials (TARSY_TOKEN_KEY); unset: no token is kept.
   */
  tokenSeal?: TokenSeal;
  /** The peer address identity headers are judged by; default: the request's socket. */
  remoteAddressOf?: (c: Context) => string | undefined;
}

export const DEFAULT_SETTINGS: IngestSettings = {
  maxAlertBytes: 1024 * 1024,
  maxJsonDepth: 64,
  publishTimeoutMs: 5_000,
  dependencyTimeoutMs: 2_000,
  alertmanager: {
    dedupeWindowMs: 4 * 3600_000,
    alertTypeLabel: "alertname",
    mode: "per_alert",
    auth: { kind: "none" },
    maxAlerts: 1000,
    runbookAnnotation: "runbook_url",
  },
  version: "0.1.0",
};
