import type { AlertmanagerIntakeResponse } from "@tarsy/contracts";
import { countPendingSessions, type DbClient } from "@tarsy/db";
import type { Context } from "hono";
import type { IngestResources } from "./deps.ts";
import { HttpError } from "./errors.ts";

/**
 * The per-alert-type pending limit (`queue.max_pending_per_alert_type`, 0 = none): while an
 * alert type has that many sessions waiting for admission, new alerts of the type are refused
 * without storing anything. The count is read without a lock, so concurrent submissions may
 * overshoot the limit by at most the number of requests in flight.
 */

/** Seconds a refused client is told to wait (`Retry-After`). */
export const PENDING_LIMIT_RETRY_AFTER_S = 30;

/** True when the alert type has reached its pending limit. */
export async function pendingLimitReached(
  deps: Pick<IngestResources, "config">,
  client: DbClient,
  alertType: string,
): Promise<boolean> {
  const limit = deps.config.queue.max_pending_per_alert_type;
  if (limit === 0) return false;
  return (await countPendingSessions(client, alertType)) >= limit;
}

function tooManyPending(c: Context, status: 429 | 503, message: string, details: unknown) {
  c.header("Retry-After", String(PENDING_LIMIT_RETRY_AFTER_S));
  return new HttpError(status, "too_many_pending", message, details);
}

/** REST intake: 429 with `Retry-After` when the alert type is at its pending limit. */
export async function enforcePendingLimit(
  deps: Pick<IngestResources, "config" | "prisma">,
  c: Context,
  alertType: string,
): Promise<void> {
  if (!(await pendingLimitReached(deps, deps.prisma, alertType))) return;
  const limit = deps.config.queue.max_pending_per_alert_type;
  throw tooManyPending(
    c,
    429,
    `alert type '${alertType}' already has ${limit} sessions waiting; retry later`,
    { alert_type: alertType, max_pending: limit },
  );
}

/**
 * Alertmanager intake: a notification with alerts refused for the pending limit is answered
 * 503 with `Retry-After` (Alertmanager retries 5xx only), the intake outcome in `details`. The
 * alerts of the notification that were under the limit are stored; Alertmanager resends the
 * whole notification and the fingerprint dedupe skips those on the retry.
 */
export function refuseIfPendingLimited(c: Context, result: AlertmanagerIntakeResponse): void {
  const refused = result.alerts_skipped.filter((s) => s.reason === "pending_limit");
  if (refused.length === 0) return;
  throw tooManyPending(
    c,
    503,
    `${refused.length} alert(s) refused: their alert type has too many sessions waiting; retry later`,
    result,
  );
}
