import { z } from "zod";
import { ActionSchema } from "./api-actions.ts";
import { IdSchema, TimestampSchema } from "./common.ts";
import { NotificationEventSchema, SessionStatusSchema } from "./enums.ts";
import { SessionLabelsSchema } from "./labels.ts";

/** The action request an `action_requested` notification announces (as the API shows it). */
export const NotificationActionSchema = ActionSchema.pick({
  id: true,
  agent_name: true,
  tool_name: true,
  server: true,
  tool: true,
  arguments: true,
  reason: true,
  status: true,
  requested_at: true,
  expires_at: true,
  dry_run: true,
});

/**
 * The JSON body of a notification webhook (`system.notifications.webhooks`). Receivers should
 * check the signature and treat `X-Tarsy-Delivery` as an idempotency key: a send cut short by
 * a crash is sent again with the same delivery id.
 */
export const NotificationWebhookPayloadSchema = z.object({
  v: z.literal(1),
  event: NotificationEventSchema,
  /** The delivery's id: the same on every attempt of this notification. */
  delivery_id: IdSchema,
  session_id: IdSchema,
  status: SessionStatusSchema,
  alert_type: z.string(),
  chain_id: z.string(),
  project: z.string(),
  author: z.string().nullable(),
  created_at: TimestampSchema,
  started_at: TimestampSchema.nullable(),
  completed_at: TimestampSchema.nullable(),
  executive_summary: z.string().nullable(),
  /**
   * The session's labels (e.g. `noise`, `action`) so a receiver can route on them: null when
   * unlabelled, `[]` when the summary applied none.
   */
  labels: SessionLabelsSchema,
  final_analysis: z.string().nullable(),
  error_message: z.string().nullable(),
  /** Who cancelled (or stopped) the session and why; null otherwise (see the session API). */
  cancelled_by: z.string().nullable(),
  cancel_reason: z.string().nullable(),
  /** `{system.dashboard_url}/sessions/{id}`, or null without a dashboard URL. */
  url: z.string().nullable(),
  /**
   * `action_requested`: the request waiting for a decision (exact tool and masked arguments,
   * the agent's masked reason, when it counts as denied); decided at the session's URL, with
   * `POST /api/v1/actions/{id}/approve|deny` or `tarsy action approve|deny {id}`. Null for the
   * session's own events.
   */
  action: NotificationActionSchema.nullable().default(null),
  /** When this attempt was sent. */
  timestamp: TimestampSchema,
});
export type NotificationWebhookPayload = z.infer<typeof NotificationWebhookPayloadSchema>;

/**
 * Headers of a webhook request. The signature is `sha256=` + hex HMAC-SHA256, keyed with the
 * webhook's secret, of `<X-Tarsy-Timestamp>.<raw body>` (present only with `secret_env`).
 */
export const WEBHOOK_HEADERS = {
  event: "x-tarsy-event",
  delivery: "x-tarsy-delivery",
  timestamp: "x-tarsy-timestamp",
  signature: "x-tarsy-signature",
} as const;

/** Where a delivery stands: being sent (or waiting to be tried again), sent, or given up. */
export const NotificationDeliveryStatusSchema = z.enum(["sending", "sent", "failed"]);

/** One notification of a session to one target (`GET /api/v1/sessions/:id/notifications`). */
export const NotificationDeliverySchema = z.object({
  id: IdSchema,
  /** `slack`, or `webhook:<n>`: the n-th of `system.notifications.webhooks`, 0-based. */
  target: z.string(),
  event: NotificationEventSchema,
  /** The action request an `action_requested` delivery announced; null for session events. */
  action_id: IdSchema.nullable(),
  status: NotificationDeliveryStatusSchema,
  /** Attempts made so far. */
  attempts: z.number().int().nonnegative(),
  /** Why the last attempt failed (kept while it is retried; null once sent). */
  last_error: z.string().nullable(),
  created_at: TimestampSchema,
  sent_at: TimestampSchema.nullable(),
});
export type NotificationDelivery = z.infer<typeof NotificationDeliverySchema>;

export const SessionNotificationsResponseSchema = z.object({
  session_id: IdSchema,
  /** Oldest first. */
  deliveries: z.array(NotificationDeliverySchema),
});
export type SessionNotificationsResponse = z.infer<typeof SessionNotificationsResponseSchema>;
