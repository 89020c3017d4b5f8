import { z } from "zod";

/** Codes of errors returned over HTTP; every 4xx/5xx body has this shape. */
export const HttpErrorCodeSchema = z.enum([
  "bad_request",
  "validation_failed",
  "unknown_alert_type",
  "unknown_mcp_server",
  "unknown_mcp_tool",
  "unauthorized",
  "forbidden",
  "not_found",
  "conflict",
  "payload_too_large",
  "unsupported_media_type",
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
