import { z } from "zod";
import { IdSchema, TimestampSchema } from "./common.ts";
import { DeadLetterSchema } from "./work.ts";

/**
 * The HTTP API of ingest-api, part 3: who the caller is, API tokens, the audit log and the
 * dead letters (administrators of every project).
 */

/** What a caller may do in a project (`authorization` in tarsy.yaml). */
export const AuthzActionSchema = z.enum([
  "get",
  "create",
  "update",
  "cancel",
  "delete",
  "approve",
  "admin",
]);
export type AuthzActionName = z.infer<typeof AuthzActionSchema>;

/** `GET /api/v1/auth/me`: the caller and what they may do, project by project. */
export const AuthMeResponseSchema = z.object({
  enabled: z.boolean(),
  user: z.string(),
  email: z.string().nullable(),
  groups: z.array(z.string()),
  source: z.enum(["proxy", "token", "receiver", "local", "none"]),
  default_project: z.string(),
  projects: z.array(z.object({ project: z.string(), actions: z.array(AuthzActionSchema) })),
});
export type AuthMeResponse = z.infer<typeof AuthMeResponseSchema>;

/** `30d`, `12h`, `45m`: how long an API token lives (none: until revoked). */
export const TokenTtlSchema = z
  .string()
  .regex(/^[1-9]\d{0,4}[mhd]$/, { error: "ttl is a number with m, h or d (e.g. 30d)" });

/** `POST /api/v1/tokens`. */
export const ApiTokenCreateRequestSchema = z.strictObject({
  name: z.string().trim().min(1).max(100),
  project: z.string().trim().min(1).max(63),
  role: z.string().trim().min(1).max(200),
  ttl: TokenTtlSchema.optional(),
});
export type ApiTokenCreateRequest = z.infer<typeof ApiTokenCreateRequestSchema>;

/** A token's metadata: never the token or its hash. */
export const ApiTokenInfoSchema = z.object({
  id: IdSchema,
  name: z.string(),
  project: z.string(),
  role: z.string(),
  created_by: z.string(),
  created_at: TimestampSchema,
  expires_at: TimestampSchema.nullable(),
  revoked_at: TimestampSchema.nullable(),
  last_used_at: TimestampSchema.nullable(),
});
export type ApiTokenInfo = z.infer<typeof ApiTokenInfoSchema>;

/** The 201 of `POST /api/v1/tokens`: the token itself is shown this once. */
export const ApiTokenCreatedSchema = ApiTokenInfoSchema.extend({ token: z.string() });
export type ApiTokenCreated = z.infer<typeof ApiTokenCreatedSchema>;

export const ApiTokenListResponseSchema = z.object({ tokens: z.array(ApiTokenInfoSchema) });
export type ApiTokenListResponse = z.infer<typeof ApiTokenListResponseSchema>;

/** `GET /api/v1/audit` query: newest first, `before` is the previous page's last id. */
export const AuditQuerySchema = z.strictObject({
  limit: z.coerce.number().int().positive().max(500).default(100),
  before: z
    .string()
    .regex(/^\d{1,19}$/, { error: "before is an entry id" })
    .optional(),
  actor: z.string().min(1).optional(),
  session_id: IdSchema.optional(),
  outcome: z.enum(["allowed", "denied"]).optional(),
});
export type AuditQuery = z.infer<typeof AuditQuerySchema>;

export const AuditEntrySchema = z.object({
  id: z.string(),
  at: TimestampSchema,
  actor: z.string(),
  identity_source: z.string(),
  action: z.string(),
  outcome: z.enum(["allowed", "denied"]),
  method: z.string(),
  path: z.string(),
  status: z.number().int(),
  session_id: z.string().nullable(),
  project: z.string().nullable(),
  remote_addr: z.string().nullable(),
  reason: z.string().nullable(),
});
export type AuditEntryResponse = z.infer<typeof AuditEntrySchema>;

export const AuditListResponseSchema = z.object({
  entries: z.array(AuditEntrySchema),
  /** Pass as `before` for the next (older) page; null on the last page. */
  next_before: z.string().nullable(),
});
export type AuditListResponse = z.infer<typeof AuditListResponseSchema>;

/** `GET /api/v1/dead-letters` query: oldest first, `after_seq` is the previous page's last seq. */
export const DeadLetterQuerySchema = z.strictObject({
  limit: z.coerce.number().int().positive().max(500).default(100),
  after_seq: z.coerce.number().int().nonnegative().optional(),
});
export type DeadLetterQuery = z.infer<typeof DeadLetterQuerySchema>;

/** One dead letter: a work message that failed for good, with its dead-letter sequence. */
export const DeadLetterEntrySchema = DeadLetterSchema.omit({ v: true, headers: true }).extend({
  /** Sequence in the dead-letter stream: what `POST /dead-letters/{seq}/redrive` takes. */
  seq: z.number().int().positive(),
});
export type DeadLetterEntry = z.infer<typeof DeadLetterEntrySchema>;

export const DeadLetterListResponseSchema = z.object({
  dead_letters: z.array(DeadLetterEntrySchema),
  /** More dead letters follow: pass the last `seq` as `after_seq`. */
  more: z.boolean(),
});
export type DeadLetterListResponse = z.infer<typeof DeadLetterListResponseSchema>;

/** The dead letter's original message, published again to its original subject. */
export const DeadLetterRedriveResponseSchema = z.object({
  seq: z.number().int().positive(),
  /** The subject it was published to (its original one). */
  subject: z.string(),
  /** Its sequence in the work stream now. */
  published_seq: z.number().int().nonnegative(),
  /** The same dead letter was redriven before: nothing new was published. */
  duplicate: z.boolean(),
});
export type DeadLetterRedriveResponse = z.infer<typeof DeadLetterRedriveResponseSchema>;
