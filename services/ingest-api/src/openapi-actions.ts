import {
  ActionAuditSchema,
  ActionDecisionBodySchema,
  ActionListQuerySchema,
  ActionListSchema,
  ActionSchema,
  HttpErrorBodySchema,
} from "@tarsy/contracts";
import { z } from "zod";

/** The OpenAPI paths of action requests: action agents' mutating calls (issue #30). */

type Json = Record<string, unknown>;
const schema = (s: z.ZodType, io: "input" | "output") =>
  z.toJSONSchema(s, { io, unrepresentable: "any", target: "draft-2020-12" });
const json = (s: z.ZodType, io: "input" | "output" = "output") => ({
  "application/json": { schema: schema(s, io) },
});
const error = (description: string) => ({ description, content: json(HttpErrorBodySchema) });
const E404 = error("not_found: unknown request, or one of a session the caller may not see");
const id = { name: "id", in: "path", required: true, schema: { type: "string", format: "uuid" } };

const decide = (verb: "approve" | "deny") => ({
  post: {
    summary:
      verb === "approve"
        ? "Approve a pending action request once (the approve action in its session's project); its execution resumes and the call is made, once"
        : "Deny a pending action request once (the approve action in its session's project); its execution resumes and its agent is told who denied it and why",
    parameters: [id],
    requestBody: { required: false, content: json(ActionDecisionBodySchema, "input") },
    responses: {
      200: { description: "the request as decided", content: json(ActionSchema) },
      400: error("invalid body"),
      403: error(
        verb === "approve"
          ? "forbidden (not the approve action), or four_eyes: the alert's submitter may not approve"
          : "forbidden: not the approve action in the session's project",
      ),
      404: E404,
      409: error("action_decided: decided already, expired, or its execution ended"),
    },
  },
});

export function actionPaths(): Json {
  return {
    "/api/v1/actions": {
      get: {
        summary: "Action requests of the caller's projects, newest first, by status and session",
        parameters: Object.entries(ActionListQuerySchema.shape).map(([name, field]) => ({
          name,
          in: "query",
          required: false,
          schema: schema(field as z.ZodType, "input"),
        })),
        responses: {
          200: { description: "the requests", content: json(ActionListSchema) },
          400: error("invalid query parameters"),
        },
      },
    },
    "/api/v1/actions/{id}": {
      get: {
        summary: "One action request: tool, masked arguments, reason, decision, call outcome",
        parameters: [id],
        responses: { 200: { description: "the request", content: json(ActionSchema) }, 404: E404 },
      },
    },
    "/api/v1/actions/{id}/audit": {
      get: {
        summary: "The request's append-only audit record, oldest first",
        parameters: [id],
        responses: {
          200: { description: "the record", content: json(ActionAuditSchema) },
          404: E404,
        },
      },
    },
    "/api/v1/actions/{id}/approve": decide("approve"),
    "/api/v1/actions/{id}/deny": decide("deny"),
  };
}
