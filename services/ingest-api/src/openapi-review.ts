import {
  HttpErrorBodySchema,
  ReviewActivityResponseSchema,
  TriageGroupResponseSchema,
  TriageGroupSchema,
  TriageQuerySchema,
  UpdateReviewRequestSchema,
  UpdateReviewResponseSchema,
} from "@tarsy/contracts";
import { z } from "zod";

/** The OpenAPI paths of the review workflow (issue #21): review, its history, triage. */

type Json = Record<string, unknown>;
const schema = (s: z.ZodType, io: "input" | "output") =>
  z.toJSONSchema(s, { io, unrepresentable: "any", target: "draft-2020-12" });
const json = (s: z.ZodType, io: "input" | "output" = "output") => ({
  "application/json": { schema: schema(s, io) },
});
const error = (description: string) => ({ description, content: json(HttpErrorBodySchema) });
const E400 = error("invalid body or parameters (field paths in details.fields)");
const E401 = error("no identified caller (authorization on)");

export function reviewPaths(): Json {
  return {
    "/api/v1/sessions/review": {
      patch: {
        summary:
          "Apply one review action (claim, unclaim, complete, acknowledge, reopen, update_feedback) to up to 50 sessions, each independently by compare-and-swap; the actor is the caller",
        requestBody: { required: true, content: json(UpdateReviewRequestSchema, "input") },
        responses: {
          200: {
            description:
              "per-session results: success with the new review state, or error not_found (also for a session the caller may not see), forbidden, conflict: … (the state the action cannot apply to)",
            content: json(UpdateReviewResponseSchema),
          },
          400: E400,
          401: E401,
          415: error("Content-Type is not application/json"),
        },
      },
    },
    "/api/v1/sessions/{id}/review-activity": {
      get: {
        summary: "A session's review history, oldest first (append-only)",
        parameters: [
          { name: "id", in: "path", required: true, schema: { type: "string", format: "uuid" } },
        ],
        responses: {
          200: { description: "the history", content: json(ReviewActivityResponseSchema) },
          404: error("unknown or deleted session"),
        },
      },
    },
    "/api/v1/sessions/triage/{group}": {
      get: {
        summary:
          "One triage group, a page at a time: investigating (not ended), needs_review, in_progress, reviewed (most recently ended first)",
        parameters: [
          { name: "group", in: "path", required: true, schema: schema(TriageGroupSchema, "input") },
          ...Object.entries(TriageQuerySchema.shape).map(([name, field]) => ({
            name,
            in: "query",
            required: false,
            schema: schema(field as z.ZodType, "input"),
            ...(name === "assignee" ? { description: "exact assignee; empty: unassigned" } : {}),
          })),
        ],
        responses: {
          200: { description: "the group's page", content: json(TriageGroupResponseSchema) },
          400: error("unknown group or invalid query parameters"),
        },
      },
    },
  };
}
