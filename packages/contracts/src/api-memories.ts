import { z } from "zod";
import { IdSchema, TimestampSchema } from "./common.ts";

/**
 * Investigation memory (issue #24, the Go TARSy's ADR-0014): discrete learnings a reflector
 * extracts from scored sessions, injected into later investigations of the same project.
 * The HTTP shapes follow the Go TARSy's memory API; the embedding is never served.
 */

export const MemoryCategorySchema = z.enum(["semantic", "episodic", "procedural"]);
export type MemoryCategory = z.infer<typeof MemoryCategorySchema>;

export const MemoryValenceSchema = z.enum(["positive", "negative", "neutral"]);
export type MemoryValence = z.infer<typeof MemoryValenceSchema>;

/** One memory, as every memory route answers it. */
export const MemoryResponseSchema = z.object({
  id: IdSchema,
  project: z.string(),
  content: z.string(),
  category: MemoryCategorySchema,
  valence: MemoryValenceSchema,
  confidence: z.number().min(0).max(1),
  seen_count: z.number().int().nonnegative(),
  source_session_id: IdSchema.nullable(),
  alert_type: z.string().nullable(),
  chain_id: z.string().nullable(),
  deprecated: z.boolean(),
  created_at: TimestampSchema,
  updated_at: TimestampSchema,
  last_seen_at: TimestampSchema,
});
export type MemoryResponse = z.infer<typeof MemoryResponseSchema>;

/** `GET /api/v1/memories`: a page of the caller's projects' memories, newest first. */
export const MemoryListResponseSchema = z.object({
  memories: z.array(MemoryResponseSchema),
  total: z.number().int().nonnegative(),
  page: z.number().int().positive(),
  page_size: z.number().int().positive(),
  total_pages: z.number().int().nonnegative(),
});
export type MemoryListResponse = z.infer<typeof MemoryListResponseSchema>;

const boolParam = z.enum(["true", "false"]).transform((v) => v === "true");

/** `GET /api/v1/memories` query: filters and paging (an unknown value is a 400). */
export const MemoryListQuerySchema = z.strictObject({
  project: z.string().min(1).optional(),
  category: MemoryCategorySchema.optional(),
  valence: MemoryValenceSchema.optional(),
  deprecated: boolParam.optional(),
  /** Session ids are uuids: anything else is a 400, not a query that cannot match. */
  source_session_id: z.uuid().optional(),
  page: z.coerce.number().int().positive().default(1),
  page_size: z.coerce.number().int().positive().max(100).default(20),
});
export type MemoryListQuery = z.infer<typeof MemoryListQuerySchema>;

/** `PATCH /api/v1/memories/:id`: what a person may change (at least one field). */
export const MemoryUpdateRequestSchema = z
  .strictObject({
    content: z.string().trim().min(1).max(10_000).optional(),
    category: MemoryCategorySchema.optional(),
    valence: MemoryValenceSchema.optional(),
    deprecated: z.boolean().optional(),
  })
  .refine((body) => Object.values(body).some((v) => v !== undefined), {
    error: "name at least one of content, category, valence, deprecated",
  });
export type MemoryUpdateRequest = z.infer<typeof MemoryUpdateRequestSchema>;

/** `GET /api/v1/sessions/:id/memories` and `/injected-memories`: a plain list. */
export const SessionMemoriesResponseSchema = z.array(MemoryResponseSchema);
export type SessionMemoriesResponse = z.infer<typeof SessionMemoriesResponseSchema>;

/** The metadata of a `memory_injected` timeline event: which memories the agent was given. */
export const MemoryInjectedMetadataSchema = z.object({
  memory_ids: z.array(IdSchema),
  count: z.number().int().nonnegative(),
});
export type MemoryInjectedMetadata = z.infer<typeof MemoryInjectedMetadataSchema>;

/**
 * What the reflector answers (a JSON object, parsed leniently): new learnings, existing
 * memories the investigation confirmed, and ones it contradicted.
 */
export const ReflectorResultSchema = z.object({
  create: z
    .array(
      z.object({
        content: z.string().trim().min(1),
        category: MemoryCategorySchema,
        valence: MemoryValenceSchema,
      }),
    )
    .default([]),
  reinforce: z.array(z.object({ memory_id: z.string() })).default([]),
  deprecate: z
    .array(z.object({ memory_id: z.string(), reason: z.string().optional() }))
    .default([]),
});
export type ReflectorResult = z.infer<typeof ReflectorResultSchema>;
