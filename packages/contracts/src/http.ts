import { z } from "zod";

/** Codes of errors returned over HTTP; every 4xx/5xx body has this shape. */
export const HttpErrorCodeSchema = z.enum([
  "bad_request",
  /** JSON nested deeper than the server accepts. */
  "too_deep",
  "validation_failed",
  "unknown_alert_type",
  "unknown_mcp_server",
  "unknown_mcp_tool",
  "unauthorized",
  /** Identity headers from an address that is not a trusted proxy (401). */
  "untrusted_identity",
  /** A bearer token or cookie that is no live TARSy API token (401). */
  "invalid_token",
  "token_expired",
  "token_revoked",
  "forbidden",
  /** A project that is not in `authorization.projects` (400). */
  "unknown_project",
  "not_found",
  /** An unknown memory, or one in a project the caller may not see (404). */
  "memory_not_found",
  "conflict",
  /** `rank_by=cost` while `system.cost_estimation.enabled` is false (400). */
  "cost_estimation_disabled",
  /** The session is still running (409): it can be deleted once it ends. */
  "session_active",
  /** Scoring needs an ended session (409). */
  "session_not_terminal",
  /** The session is being scored already (409). */
  "scoring_in_progress",
  /** The action request was decided already, or its execution ended (409). */
  "action_decided",
  /** Four eyes: whoever submitted the alert may not approve its actions (403). */
  "four_eyes",
  "payload_too_large",
  "unsupported_media_type",
  /** Request line (URL) and headers together exceed the server's limit (431). */
  "headers_too_large",
  /** The request did not arrive completely in time (408). */
  "request_timeout",
  "rate_limited",
  "too_many_pending",
  "internal",
  "unavailable",
]);
export type HttpErrorCode = z.infer<typeof HttpErrorCodeSchema>;

export const HttpErrorBodySchema = z.object({
  error: z.object({
    code: HttpErrorCodeSchema,
    message: z.string(),
    details: z.unknown().optional(),
  }),
});
export type HttpErrorBody = z.infer<typeof HttpErrorBodySchema>;
