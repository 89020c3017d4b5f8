import {
  ActiveSessionsResponseSchema,
  AlertmanagerIntakeResponseSchema,
  AlertmanagerWebhookSchema,
  AlertSubmitRequestSchema,
  AlertSubmitResponseSchema,
  AlertTypesResponseSchema,
  CancelRequestSchema,
  CancelResponseSchema,
  ChatMessageRequestSchema,
  ChatMessageResponseSchema,
  DefaultToolsResponseSchema,
  FilterOptionsResponseSchema,
  HealthResponseSchema,
  HttpErrorBodySchema,
  LLMInteractionDetailSchema,
  MCPInteractionDetailSchema,
  McpServersResponseSchema,
  RunbooksResponseSchema,
  ScoreSessionResponseSchema,
  SessionDeleteResponseSchema,
  SessionDetailSchema,
  SessionListQuerySchema,
  SessionListResponseSchema,
  SessionNotificationsResponseSchema,
  SessionScoreSchema,
  SessionStatisticsSchema,
  SessionStatusResponseSchema,
  SystemConfigResponseSchema,
  SystemWarningsResponseSchema,
  TimelineResponseSchema,
  TraceListResponseSchema,
  UsageSeriesQuerySchema,
  UsageSeriesResponseSchema,
  UsageSummaryQuerySchema,
  UsageSummaryResponseSchema,
} from "@tarsy/contracts";
import { z } from "zod";
import { accessPaths } from "./openapi-access.ts";
import { actionPaths } from "./openapi-actions.ts";
import { memoryPaths } from "./openapi-memories.ts";
import { reviewPaths } from "./openapi-review.ts";

/** The OpenAPI 3.1 document of the API, generated from the contracts' zod schemas. */

type Json = Record<string, unknown>;
const schema = (s: z.ZodType, io: "input" | "output"): Json =>
  z.toJSONSchema(s, { io, unrepresentable: "any", target: "draft-2020-12" }) as Json;

const json = (s: z.ZodType, io: "input" | "output" = "output") => ({
  "application/json": { schema: schema(s, io) },
});

const error = (description: string) => ({ description, content: json(HttpErrorBodySchema) });
const ok = (status: number, description: string, s: z.ZodType) => ({
  [status]: { description, content: json(s) },
});
const body = (s: z.ZodType) => ({ required: true, content: json(s, "input") });
const idParam = (name: string) => ({
  name,
  in: "path",
  required: true,
  schema: { type: "string", format: "uuid" },
});

function queryParams(s: z.ZodObject): Json[] {
  return Object.entries(s.shape).map(([name, field]) => ({
    name,
    in: "query",
    required: false,
    schema: schema(field as z.ZodType, "input"),
  }));
}

export function buildOpenApi(version: string): Json {
  const E400 = error(
    "invalid body or parameters (field paths in details.fields): unknown query parameters, strings with NUL or unpaired surrogates, invalid UTF-8, JSON nested deeper than MAX_JSON_DEPTH (code too_deep)",
  );
  const E404 = error("unknown or deleted session / interaction");
  const E503 = error("a dependency (NATS) is unavailable; nothing was stored");
  const session = [idParam("id")];
  return {
    openapi: "3.1.0",
    info: {
      title: "TARSy ingest-api",
      version,
      description:
        "Alert intake (REST and Alertmanager), sessions, timeline, trace, chat and system endpoints. " +
        "Every 4xx/5xx body is { error: { code, message, details? } }.",
    },
    paths: {
      "/health": {
        get: {
          summary: "Health of the service and its dependencies",
          responses: {
            ...ok(200, "healthy", HealthResponseSchema),
            503: { description: "degraded", content: json(HealthResponseSchema) },
          },
        },
      },
      "/api/v1/alerts": {
        post: {
          summary: "Submit an alert; creates a queued session",
          parameters: [
            { name: "X-Forwarded-User", in: "header", schema: { type: "string" } },
            { name: "X-Forwarded-Email", in: "header", schema: { type: "string" } },
          ],
          requestBody: body(AlertSubmitRequestSchema),
          responses: {
            ...ok(202, "accepted", AlertSubmitResponseSchema),
            400: E400,
            413: error("alert data larger than 1 MB"),
            415: error("Content-Type is not application/json, or its charset is not UTF-8"),
            429: error(
              "too_many_pending: the alert type has queue.max_pending_per_alert_type sessions waiting (Retry-After)",
            ),
            503: E503,
          },
        },
      },
      "/api/v1/alerts/alertmanager": {
        post: {
          summary: "Alertmanager webhook receiver (payload version 4)",
          security: [{}, { bearer: [] }, { basic: [] }],
          requestBody: body(AlertmanagerWebhookSchema),
          responses: {
            ...ok(200, "sessions created and alerts skipped", AlertmanagerIntakeResponseSchema),
            400: error(
              "invalid body, or unknown_project: a project label names a project that is not configured (details: projects, alerts, known_projects); nothing stored",
            ),
            401: error("credentials required and missing or wrong"),
            403: error(
              "a project label names a project the receiver may not create in (details: projects); nothing stored",
            ),
            413: error(
              "more alerts than ALERTMANAGER_MAX_ALERTS (details: limit, count); nothing stored",
            ),
            415: error("Content-Type is not application/json, or its charset is not UTF-8"),
            503: error(
              "bus unavailable, or too_many_pending: some alerts' types are at their pending limit (the rest were stored; Retry-After; Alertmanager retries)",
            ),
          },
        },
      },
      "/api/v1/sessions": {
        get: {
          summary:
            "List sessions with filters, sorting and pagination (`label`: sessions labelled with that name; a label no configured map has is a 400)",
          parameters: queryParams(SessionListQuerySchema),
          responses: { ...ok(200, "a page of sessions", SessionListResponseSchema), 400: E400 },
        },
      },
      "/api/v1/sessions/active": {
        get: {
          summary: "Running and queued sessions",
          responses: ok(200, "active sessions", ActiveSessionsResponseSchema),
        },
      },
      "/api/v1/sessions/filter-options": {
        get: {
          summary: "Values for the list filters",
          responses: ok(200, "filter options", FilterOptionsResponseSchema),
        },
      },
      "/api/v1/sessions/{id}": {
        get: {
          summary: "Session detail: stages, executions, analysis, summary, chat, token usage",
          parameters: session,
          responses: { ...ok(200, "the session", SessionDetailSchema), 404: E404 },
        },
        delete: {
          summary:
            "Delete an ended session (soft: it leaves every list and lookup at once; erased after system.retention.hard_delete_after)",
          parameters: session,
          responses: {
            ...ok(200, "deleted", SessionDeleteResponseSchema),
            404: E404,
            409: error("the session has not ended (session_active)"),
          },
        },
      },
      "/api/v1/sessions/{id}/summary": {
        get: {
          summary:
            "Session statistics (the Go TARSy's summary): interactions, tokens, duration, stage counts; the latest score (total_score) and scoring_status",
          parameters: session,
          responses: { ...ok(200, "the statistics", SessionStatisticsSchema), 404: E404 },
        },
      },
      "/api/v1/sessions/{id}/status": {
        get: {
          summary:
            "Polling surface: status, final analysis, executive summary, labels, error. Sends a strong ETag of the body; If-None-Match with it answers 304 while nothing changed",
          parameters: [
            ...session,
            { name: "If-None-Match", in: "header", required: false, schema: { type: "string" } },
          ],
          responses: {
            200: {
              description: "the status",
              headers: {
                ETag: { description: "strong hash of the body", schema: { type: "string" } },
              },
              content: json(SessionStatusResponseSchema),
            },
            304: { description: "unchanged since the ETag sent in If-None-Match (no body)" },
            404: E404,
          },
        },
      },
      "/api/v1/sessions/{id}/timeline": {
        get: {
          summary: "Timeline events ordered by sequence number",
          parameters: session,
          responses: { ...ok(200, "the timeline", TimelineResponseSchema), 404: E404 },
        },
      },
      "/api/v1/sessions/{id}/cancel": {
        post: {
          summary: "Cancel a running session or its running chat answer",
          description:
            "A queued session is cancelled at once (and starts as reviewed); a running one goes through cancelling. The optional body's reason (at most 500 characters, trimmed; blank is none) is stored with the caller's identity (api-client without one) as the session's cancel_reason and cancelled_by. A chat answer's cancel records neither.",
          parameters: session,
          requestBody: {
            required: false,
            content: json(CancelRequestSchema, "input"),
          },
          responses: {
            ...ok(202, "cancel requested", CancelResponseSchema),
            400: error("reason is not a string or longer than 500 characters; nothing was sent"),
            404: E404,
            409: error("nothing to cancel"),
            415: error("a body that is not application/json"),
            503: E503,
          },
        },
      },
      "/api/v1/sessions/{id}/chat/messages": {
        post: {
          summary: "Ask a follow-up question (creates the chat on first use)",
          parameters: session,
          requestBody: body(ChatMessageRequestSchema),
          responses: {
            ...ok(202, "accepted", ChatMessageResponseSchema),
            400: E400,
            404: E404,
            409: error("session not finished, chat disabled, or a message is being answered"),
            415: error("Content-Type is not application/json"),
            503: E503,
          },
        },
      },
      "/api/v1/sessions/{id}/score": {
        post: {
          summary: "Score an ended session now with the LLM judge (whatever scoring.enabled says)",
          parameters: session,
          responses: {
            ...ok(202, "scoring started", ScoreSessionResponseSchema),
            404: E404,
            409: error(
              "the session has not ended (session_not_terminal) or is being scored (scoring_in_progress)",
            ),
          },
        },
        get: {
          summary:
            "The session's latest score: its status, 0-100 score, analysis, failure tags and tool report",
          parameters: session,
          responses: {
            ...ok(200, "the latest scoring run", SessionScoreSchema),
            404: error("no such session, or it was never scored"),
          },
        },
      },
      "/api/v1/sessions/{id}/notifications": {
        get: {
          summary:
            "Who was told: each Slack and webhook delivery with its status, attempts and last error",
          parameters: session,
          responses: {
            ...ok(200, "the deliveries, oldest first", SessionNotificationsResponseSchema),
            404: E404,
          },
        },
      },
      "/api/v1/sessions/{id}/trace": {
        get: {
          summary: "Interactions grouped stage → execution",
          parameters: session,
          responses: { ...ok(200, "the trace", TraceListResponseSchema), 404: E404 },
        },
      },
      "/api/v1/sessions/{id}/trace/llm/{interaction_id}": {
        get: {
          summary: "One LLM interaction with its conversation",
          parameters: [...session, idParam("interaction_id")],
          responses: { ...ok(200, "the interaction", LLMInteractionDetailSchema), 404: E404 },
        },
      },
      "/api/v1/sessions/{id}/trace/mcp/{interaction_id}": {
        get: {
          summary: "One MCP interaction: arguments, result, available tools",
          parameters: [...session, idParam("interaction_id")],
          responses: { ...ok(200, "the interaction", MCPInteractionDetailSchema), 404: E404 },
        },
      },
      "/api/v1/system/warnings": {
        get: {
          summary: "Active system warnings",
          responses: { ...ok(200, "warnings", SystemWarningsResponseSchema), 503: E503 },
        },
      },
      "/api/v1/runbooks": {
        get: {
          summary:
            "Runbooks (.md files) under system.runbooks.repo_url, as GitHub blob URLs; [] when none is configured or the listing fails",
          responses: ok(200, "runbook URLs", RunbooksResponseSchema),
        },
      },
      "/api/v1/usage/summary": {
        get: {
          summary:
            "LLM usage and estimated cost over [start_date, end_date) (default: the last 30 days) of the caller's visible projects: totals, per day, model, alert type and chain, top sessions",
          parameters: queryParams(UsageSummaryQuerySchema),
          responses: { ...ok(200, "the usage summary", UsageSummaryResponseSchema), 400: E400 },
        },
      },
      "/api/v1/usage/series": {
        get: {
          summary:
            "Estimated cost per calendar day of `timezone` (IANA, default UTC) of the caller's visible sessions created in [start_date, end_date) (default: the last 30 days, at most 365): every day (zeros included) with its session count, average cost per session, cost of the top 6 models and other_models; { cost_estimation_enabled: false } while estimation is off",
          parameters: queryParams(UsageSeriesQuerySchema),
          responses: { ...ok(200, "the usage series", UsageSeriesResponseSchema), 400: E400 },
        },
      },
      "/api/v1/system/mcp-servers": {
        get: {
          summary: "Configured MCP servers and their tools",
          responses: ok(200, "servers", McpServersResponseSchema),
        },
      },
      "/api/v1/system/alert-types": {
        get: {
          summary: "Alert types and chains",
          responses: ok(200, "alert types", AlertTypesResponseSchema),
        },
      },
      "/api/v1/system/default-tools": {
        get: {
          summary:
            "Native tools (Gemini: google_search, code_execution, url_context) on by default, from the default provider's native_tools; and each provider's",
          responses: ok(200, "native tools", DefaultToolsResponseSchema),
        },
      },
      "/api/v1/system/config": {
        get: {
          summary:
            "The resolved configuration (chains, agents, LLM providers, MCP servers), secrets redacted",
          responses: ok(200, "configuration", SystemConfigResponseSchema),
        },
      },
      "/api/v1/openapi.json": {
        get: { summary: "This document", responses: { 200: { description: "OpenAPI 3.1" } } },
      },
      ...accessPaths(),
      ...reviewPaths(),
      ...memoryPaths(),
      ...actionPaths(),
    },
    components: {
      securitySchemes: {
        /** A TARSy API token (`tarsy_…`), or the webhook's own bearer for the receiver. */
        bearer: { type: "http", scheme: "bearer" },
        basic: { type: "http", scheme: "basic" },
      },
    },
  };
}
