import { z } from "zod";
import { IdSchema, JsonObjectSchema, TimestampSchema, V1 } from "./common.ts";

/**
 * Actions a team can trust (issue #30): every mutating tool call of an action agent is an
 * action request. It needs an approval (unless the agent's `approval` is `auto`); once
 * approved, mcp-gateway runs it at most once, claiming it by its id (the idempotency key).
 */

export const ActionStatusSchema = z.enum(["pending", "approved", "denied", "expired", "cancelled"]);
export type ActionStatus = z.infer<typeof ActionStatusSchema>;
/** Statuses nobody can decide any more. */
export const DECIDED_ACTION_STATUSES = ["approved", "denied", "expired", "cancelled"] as const;

export const ActionCallStatusSchema = z.enum([
  "not_started",
  "started",
  "succeeded",
  "failed",
  "unknown",
]);
export type ActionCallStatus = z.infer<typeof ActionCallStatusSchema>;

/** An agent's `approval`: a person decides each mutating call, or its config approves it. */
export const ApprovalModeSchema = z.enum(["required", "auto"]);
export type ApprovalMode = z.infer<typeof ApprovalModeSchema>;

/** `GET /api/v1/actions/:id` (and each item of the list). */
export const ActionSchema = z.object({
  id: IdSchema,
  session_id: IdSchema,
  /** The session's project (who may see and decide the request) and alert type. */
  project: z.string(),
  alert_type: z.string(),
  stage_id: IdSchema.nullable(),
  execution_id: IdSchema,
  agent_name: z.string(),
  tool_call_id: z.string(),
  /** Canonical `server.tool`. */
  tool_name: z.string(),
  server: z.string(),
  tool: z.string(),
  /** The call's arguments, masked. */
  arguments: JsonObjectSchema,
  /** The agent's stated reason and evidence (its text of the turn that made the call, masked). */
  reason: z.string(),
  approval_mode: ApprovalModeSchema,
  status: ActionStatusSchema,
  requested_by: z.string().nullable(),
  requested_at: TimestampSchema,
  /** When a pending request counts as denied (null: no timeout). */
  expires_at: TimestampSchema.nullable(),
  decided_by: z.string().nullable(),
  decided_at: TimestampSchema.nullable(),
  comment: z.string().nullable(),
  call_status: ActionCallStatusSchema,
  call_started_at: TimestampSchema.nullable(),
  call_ended_at: TimestampSchema.nullable(),
  /** What the server answered (masked). */
  result: z.string().nullable(),
  /**
   * The call's dry-run form (`mcp_servers.<id>.tools.<tool>.dry_run`), run when approval was
   * requested, and what the server answered (masked); null when the tool has none.
   */
  dry_run: z
    .object({ status: z.enum(["succeeded", "failed"]), result: z.string() })
    .nullable()
    .default(null),
});
export type Action = z.infer<typeof ActionSchema>;

/** `GET /api/v1/actions?status=&session_id=&limit=`. */
export const ActionListQuerySchema = z.object({
  status: ActionStatusSchema.optional(),
  session_id: IdSchema.optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});
export const ActionListSchema = z.object({ actions: z.array(ActionSchema) });
export type ActionList = z.infer<typeof ActionListSchema>;

/** `POST /api/v1/actions/:id/approve` and `/deny`. */
export const ActionDecisionBodySchema = z.strictObject({
  comment: z.string().max(4_000).optional(),
});
export type ActionDecisionBody = z.infer<typeof ActionDecisionBodySchema>;

/** One step of an action in its append-only audit record. */
export const ActionAuditEventSchema = z.enum([
  "requested",
  "approved",
  "denied",
  "expired",
  "cancelled",
  "call_started",
  "call_succeeded",
  "call_failed",
  "outcome_unknown",
]);
export type ActionAuditEvent = z.infer<typeof ActionAuditEventSchema>;

/** `GET /api/v1/actions/:id/audit`. */
export const ActionAuditEntrySchema = z.object({
  id: z.number().int(),
  at: TimestampSchema,
  action_id: IdSchema,
  session_id: IdSchema,
  execution_id: IdSchema,
  agent_name: z.string(),
  tool_name: z.string(),
  event: ActionAuditEventSchema,
  actor: z.string(),
  detail: JsonObjectSchema.nullable(),
});
export type ActionAuditEntry = z.infer<typeof ActionAuditEntrySchema>;
export const ActionAuditSchema = z.object({ entries: z.array(ActionAuditEntrySchema) });

/**
 * An action was requested, decided, or its call started or ended; on the session's channel and
 * the sessions channel (the dashboard and the notifier announce pending ones).
 */
export const ActionStatusEventSchema = z.object({
  v: V1,
  type: z.literal("action.status"),
  session_id: IdSchema,
  action: ActionSchema,
  timestamp: TimestampSchema,
});
export type ActionStatusEvent = z.infer<typeof ActionStatusEventSchema>;
