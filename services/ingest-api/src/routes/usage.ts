import {
  type SessionStatus,
  UsageSeriesQuerySchema,
  type UsageSeriesResponse,
  type UsageSummaryQuery,
  UsageSummaryQuerySchema,
  type UsageSummaryResponse,
} from "@tarsy/contracts";
import { getUsageSeries, getUsageSummary, UnknownTimeZoneError, type UsageTotals } from "@tarsy/db";
import { Hono } from "hono";
import { visibleProjects } from "../authz/guard.ts";
import type { IngestResources } from "../deps.ts";
import { HttpError } from "../errors.ts";
import { readQuery } from "../request.ts";

const DAY_MS = 86_400_000;
const DEFAULT_WINDOW_DAYS = 30;
/** The longest window the series charts (days of 24 hours). */
export const MAX_SERIES_DAYS = 365;
const IS_DAY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * The window [start, end) of a query: a day as start_date is its first instant, a day as
 * end_date includes that whole day (the next day's first instant); without end_date, now;
 * without start_date, 30 days before the end.
 */
export function usageWindow(
  q: Pick<UsageSummaryQuery, "start_date" | "end_date">,
  now = new Date(),
): { start: Date; end: Date } {
  const bound = (value: string, wholeDay: boolean) =>
    IS_DAY.test(value)
      ? new Date(Date.parse(`${value}T00:00:00Z`) + (wholeDay ? DAY_MS : 0))
      : new Date(value);
  const end = q.end_date ? bound(q.end_date, true) : now;
  const start = q.start_date
    ? bound(q.start_date, false)
    : new Date(end.getTime() - DEFAULT_WINDOW_DAYS * DAY_MS);
  if (start.getTime() >= end.getTime()) {
    throw new HttpError(
      400,
      "validation_failed",
      "invalid query parameters: start_date, end_date",
      {
        fields: [{ path: "start_date", message: "start_date must be before end_date" }],
      },
    );
  }
  return { start, end };
}

const badField = (path: string, message: string) =>
  new HttpError(400, "validation_failed", `invalid query parameters: ${path}`, {
    fields: [{ path, message }],
  });

/** An IANA zone name (`Area/Location`, `UTC`, `EST5EDT`): no offsets nor POSIX rules. */
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/;

/** Whether `name` is an IANA time zone the runtime knows (the database may still refuse it). */
export function isIanaTimeZone(name: string): boolean {
  if (!ZONE_NAME.test(name)) return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

const present = (t: UsageTotals) => ({
  sessions: t.sessions,
  llm_interactions: t.llmInteractions,
  input_tokens: t.inputTokens,
  output_tokens: t.outputTokens,
  thinking_tokens: t.thinkingTokens,
  total_tokens: t.totalTokens,
  cache_read_tokens: t.cacheReadTokens,
  cache_creation_tokens: t.cacheCreationTokens,
  estimated_cost_usd: t.estimatedCostUsd,
  unpriced_interactions: t.unpricedInteractions,
  cost_completeness: t.costCompleteness,
});

/**
 * `GET /api/v1/usage/summary`: usage and estimated cost of the caller's visible projects;
 * `GET /api/v1/usage/series`: their estimated cost per calendar day of a timezone and model.
 */
export function usageRoutes(deps: IngestResources): Hono {
  const app = new Hono();

  app.get("/summary", async (c) => {
    const q = readQuery(c, UsageSummaryQuerySchema);
    const { start, end } = usageWindow(q);
    // As in the Go TARSy: with estimation off there is no cost to rank by.
    const estimating = deps.config.system.cost_estimation.enabled;
    if (!estimating && q.rank_by === "cost") {
      throw new HttpError(
        400,
        "cost_estimation_disabled",
        "cost estimation is disabled (system.cost_estimation.enabled: false): rank by tokens",
      );
    }
    const rankBy = q.rank_by ?? (estimating ? "cost" : "tokens");
    const usage = await getUsageSummary(deps.prisma, {
      start,
      end,
      alertType: q.alert_type,
      chainId: q.chain_id,
      projects: visibleProjects(deps, c),
      rankBy,
      top: q.top,
    });
    const body: UsageSummaryResponse = {
      start_date: start.toISOString(),
      end_date: end.toISOString(),
      rank_by: rankBy,
      totals: present(usage.totals),
      by_day: usage.byDay.map((d) => ({ ...present(d), date: d.date })),
      by_model: usage.byModel.map((m) => ({ ...present(m), model: m.model })),
      by_alert_type: usage.byAlertType.map((a) => ({ ...present(a), alert_type: a.alertType })),
      by_chain: usage.byChain.map((ch) => ({ ...present(ch), chain_id: ch.chainId })),
      top_sessions: usage.topSessions.map((s) => {
        const { sessions: _, ...totals } = present(s);
        return {
          ...totals,
          session_id: s.sessionId,
          alert_type: s.alertType,
          chain_id: s.chainId,
          status: s.status as SessionStatus,
          created_at: s.createdAt.toISOString(),
        };
      }),
    };
    return c.json(body);
  });

  app.get("/series", async (c) => {
    const q = readQuery(c, UsageSeriesQuerySchema);
    const timeZone = q.timezone ?? "UTC";
    if (!isIanaTimeZone(timeZone)) {
      throw badField("timezone", "expected an IANA time zone name, e.g. Europe/Berlin");
    }
    const { start, end } = usageWindow(q);
    if (end.getTime() - start.getTime() > MAX_SERIES_DAYS * DAY_MS) {
      throw badField("start_date", `the window must not be longer than ${MAX_SERIES_DAYS} days`);
    }
    if (!deps.config.system.cost_estimation.enabled) {
      const off: UsageSeriesResponse = { cost_estimation_enabled: false };
      return c.json(off);
    }
    const series = await getUsageSeries(deps.prisma, {
      start,
      end,
      timeZone,
      alertType: q.alert_type,
      chainId: q.chain_id,
      projects: visibleProjects(deps, c),
    }).catch((err: unknown) => {
      if (err instanceof UnknownTimeZoneError) {
        throw badField("timezone", "the time zone is not known to the database");
      }
      throw err;
    });
    const body: UsageSeriesResponse = {
      cost_estimation_enabled: true,
      window: { start: start.toISOString(), end: end.toISOString() },
      timezone: timeZone,
      bucket: "day",
      cost_completeness: series.costCompleteness,
      unpriced_interaction_count: series.unpricedInteractions,
      unpriced_token_count: series.unpricedTokens,
      models: [...series.models],
      points: series.points.map((p) => ({
        date: p.date,
        start: p.start.toISOString(),
        end: p.end.toISOString(),
        session_count: p.sessionCount,
        estimated_cost_usd: p.estimatedCostUsd,
        ...(p.sessionCount > 0 ? { average_cost_usd: p.estimatedCostUsd / p.sessionCount } : {}),
        by_model: { ...p.byModel },
        ...(p.otherModels.length > 0
          ? {
              other_models: p.otherModels.map((m) => ({
                model_name: m.modelName,
                estimated_cost_usd: m.estimatedCostUsd,
              })),
            }
          : {}),
      })),
    };
    return c.json(body);
  });

  return app;
}
