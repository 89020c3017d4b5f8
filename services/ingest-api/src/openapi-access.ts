import {
  ApiTokenCreatedSchema,
  ApiTokenCreateRequestSchema,
  ApiTokenListResponseSchema,
  AuditListResponseSchema,
  AuditQuerySchema,
  AuthMeResponseSchema,
  DeadLetterListResponseSchema,
  DeadLetterQuerySchema,
  DeadLetterRedriveResponseSchema,
  HttpErrorBodySchema,
} from "@tarsy/contracts";
import { z } from "zod";

/** The OpenAPI paths of `/auth/me`, `/tokens`, `/audit` and `/dead-letters` (authorization, #29). */

type Json = Record<string, unknown>;
const json = (s: z.ZodType, io: "input" | "output" = "output") => ({
  "application/json": {
    schema: z.toJSONSchema(s, { io, unrepresentable: "any", target: "draft-2020-12" }),
  },
});
const error = (description: string) => ({ description, content: json(HttpErrorBodySchema) });
const E401 = error(
  "no identified caller, identity headers from an untrusted address, or an invalid, expired or revoked API token",
);
const E403 = error("the caller may not do this (forbidden)");

export function accessPaths(): Json {
  return {
    "/api/v1/auth/me": {
      get: {
        summary: "The caller, and what they may do project by project",
        responses: {
          200: { description: "the caller", content: json(AuthMeResponseSchema) },
          401: E401,
        },
      },
    },
    "/api/v1/tokens": {
      get: {
        summary: "API tokens of the projects the caller administers (metadata only)",
        responses: {
          200: { description: "tokens", content: json(ApiTokenListResponseSchema) },
          401: E401,
          403: E403,
        },
      },
      post: {
        summary: "Create an API token (shown once) with a policy role in one project",
        requestBody: { required: true, content: json(ApiTokenCreateRequestSchema, "input") },
        responses: {
          201: { description: "the token and its metadata", content: json(ApiTokenCreatedSchema) },
          400: error("invalid body, unknown role, or unknown_project"),
          401: E401,
          403: E403,
        },
      },
    },
    "/api/v1/tokens/{id}": {
      delete: {
        summary: "Revoke an API token",
        parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }],
        responses: {
          204: { description: "revoked" },
          401: E401,
          403: E403,
          404: error("no such token in the caller's projects"),
          409: error("revoked already"),
        },
      },
    },
    "/api/v1/audit": {
      get: {
        summary: "The audit log, newest first (administrators of every project)",
        parameters: Object.keys(AuditQuerySchema.shape).map((name) => ({
          name,
          in: "query",
          required: false,
          schema: { type: "string" },
        })),
        responses: {
          200: { description: "entries", content: json(AuditListResponseSchema) },
          401: E401,
          403: E403,
        },
      },
    },
    "/api/v1/dead-letters": {
      get: {
        summary:
          "Dead letters (work messages that failed for good), oldest first (administrators of every project)",
        parameters: Object.keys(DeadLetterQuerySchema.shape).map((name) => ({
          name,
          in: "query",
          required: false,
          schema: { type: "integer" },
        })),
        responses: {
          200: {
            description: "a page of dead letters",
            content: json(DeadLetterListResponseSchema),
          },
          400: error("invalid query parameters"),
          401: E401,
          403: E403,
          503: error("NATS unavailable"),
        },
      },
    },
    "/api/v1/dead-letters/{seq}/redrive": {
      post: {
        summary:
          "Publishes a dead letter's original message to its original subject again and removes it (administrators of every project; audited)",
        parameters: [{ name: "seq", in: "path", required: true, schema: { type: "integer" } }],
        responses: {
          200: { description: "redriven", content: json(DeadLetterRedriveResponseSchema) },
          400: error("seq is not a dead-letter sequence"),
          401: E401,
          403: E403,
          404: error("no dead letter with that sequence"),
          503: error("NATS unavailable"),
        },
      },
    },
  };
}
