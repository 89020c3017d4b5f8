import {
  HttpErrorBodySchema,
  MemoryListQuerySchema,
  MemoryListResponseSchema,
  MemoryResponseSchema,
  MemoryUpdateRequestSchema,
  SessionMemoriesResponseSchema,
} from "@tarsy/contracts";
import { z } from "zod";

/** The OpenAPI paths of investigation memory (issue #24). */

type Json = Record<string, unknown>;
const schema = (s: z.ZodType, io: "input" | "output") =>
  z.toJSONSchema(s, { io, unrepresentable: "any", target: "draft-2020-12" });
const json = (s: z.ZodType, io: "input" | "output" = "output") => ({
  "application/json": { schema: schema(s, io) },
});
const error = (description: string) => ({ description, content: json(HttpErrorBodySchema) });
const E400 = error("invalid body or parameters (field paths in details.fields)");
const E404 = error("memory_not_found: unknown memory, or one in a project the caller may not see");
const E403 = error("the caller may see the memory but not do this in its project");
const id = { name: "id", in: "path", required: true, schema: { type: "string", format: "uuid" } };

const sessionList = (summary: string) => ({
  get: {
    summary,
    parameters: [id],
    responses: {
      200: { description: "the memories", content: json(SessionMemoriesResponseSchema) },
      404: error("unknown or deleted session"),
    },
  },
});

export function memoryPaths(): Json {
  return {
    "/api/v1/memories": {
      get: {
        summary:
          "A page of the caller's projects' investigation memories, newest first, by project, category, valence, deprecated and source session",
        parameters: Object.entries(MemoryListQuerySchema.shape).map(([name, field]) => ({
          name,
          in: "query",
          required: false,
          schema: schema(field as z.ZodType, "input"),
        })),
        responses: {
          200: { description: "the page", content: json(MemoryListResponseSchema) },
          400: E400,
        },
      },
    },
    "/api/v1/memories/{id}": {
      get: {
        summary: "One memory (never its embedding)",
        parameters: [id],
        responses: {
          200: { description: "the memory", content: json(MemoryResponseSchema) },
          404: E404,
        },
      },
      patch: {
        summary:
          "Edit a memory's content, category or valence, or (un)deprecate it (the update action in its project); a new content drops the stored embedding",
        parameters: [id],
        requestBody: { required: true, content: json(MemoryUpdateRequestSchema, "input") },
        responses: {
          200: { description: "the memory as changed", content: json(MemoryResponseSchema) },
          400: E400,
          403: E403,
          404: E404,
          415: error("Content-Type is not application/json"),
        },
      },
      delete: {
        summary: "Delete a memory and the record of where it was injected (the delete action)",
        parameters: [id],
        responses: { 204: { description: "deleted" }, 403: E403, 404: E404 },
      },
    },
    "/api/v1/sessions/{id}/memories": sessionList(
      "Memories learned from this session, oldest first",
    ),
    "/api/v1/sessions/{id}/injected-memories": sessionList(
      "Memories given to this session's agents, in the order they were injected",
    ),
  };
}
