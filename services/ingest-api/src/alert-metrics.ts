import type { ServiceMetrics } from "@tarsy/metrics";
import type { MiddlewareHandler } from "hono";
import { HttpError } from "./errors.ts";

export type AlertsReceived = ServiceMetrics<"ingest-api">["alertsReceived"];
export type AlertSource = "api" | "alertmanager";
/** accepted: a session investigates it; skipped: deduplicated or resolved; rejected: 4xx; failed: 5xx. */
export type AlertOutcome = "accepted" | "skipped" | "rejected" | "failed";

/**
 * Counts a request of `source` that ends in an error as one alert, `rejected` (4xx) or
 * `failed` (5xx); the route counts what it accepted or skipped.
 */
export function countFailedAlerts(counter: AlertsReceived, source: AlertSource): MiddlewareHandler {
  const count = (status: number) =>
    counter.inc({ source, status: status >= 500 ? "failed" : "rejected" });
  return async (c, next) => {
    try {
      await next();
    } catch (err) {
      count(err instanceof HttpError ? err.status : 500);
      throw err;
    }
    if (c.res.status >= 400) count(c.res.status);
  };
}
