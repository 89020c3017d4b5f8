import { z } from "zod";
import { CostCompletenessSchema } from "./api-sessions.ts";
import { IdSchema, TimestampSchema } from "./common.ts";
import { SessionStatusSchema } from "./enums.ts";

/** A day (`YYYY-MM-DD`, UTC) or an RFC 3339 instant. */
const DateBoundSchema = z.union([z.iso.date(), TimestampSchema], {
  error: "expected YYYY-MM-DD or an RFC 3339 timestamp",
});

/**
 * `GET /api/v1/usage/summary`: LLM usage and its estimated cost over the LLM interactions
 * written in [start_date, end_date) (a day as end_date includes that whole day). Default: the
 * last 30 days. Only sessions of projects the caller may read count; deleted sessions do not.
 * The window must not be empty: start_date before end_date (else 400 `validation_failed`).
 * Unknown parameters are refused (400), as in every query of the API.
 */
export const UsageSummaryQuerySchema = z
  .object({
    start_date: DateBoundSchema.optional(),
    end_date: DateBoundSchema.optional(),
    alert_type: z.string().min(1).optional(),
    chain_id: z.string().min(1).optional(),
    /** Default cost; tokens while cost estimation is disabled (then cost is refused with 400). */
    rank_by: z.enum(["cost", "tokens"]).optional(),
    /** How many top sessions (default 10, at most 100). */
    top: z.coerce.number().int().min(1).max(100).default(10),
  })
  .strict();
export type UsageSummaryQuery = z.infer<typeof UsageSummaryQuerySchema>;

export const UsageTotalsSchema = z.object({
  /** Sessions with at least one LLM interaction in the window. */
  sessions: z.number().int().nonnegative(),
  llm_interactions: z.number().int().nonnegative(),
  input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nonnegative(),
  thinking_tokens: z.number().int().nonnegative(),
  total_tokens: z.number().int().nonnegative(),
  /** Prompt tokens read from / written to provider prompt caches; input_tokens is uncached. */
  cache_read_tokens: z.number().int().nonnegative(),
  cache_creation_tokens: z.number().int().nonnegative(),
  estimated_cost_usd: z.number().nonnegative(),
  unpriced_interactions: z.number().int().nonnegative(),
  cost_completeness: CostCompletenessSchema,
});
export type UsageTotals = z.infer<typeof UsageTotalsSchema>;

export const UsageSummaryResponseSchema = z.object({
  /** The window actually used (instants, UTC). */
  start_date: TimestampSchema,
  end_date: TimestampSchema,
  rank_by: z.enum(["cost", "tokens"]),
  totals: UsageTotalsSchema,
  /** Per UTC day with usage, oldest first: cost and tokens over time. */
  by_day: z.array(UsageTotalsSchema.extend({ date: z.iso.date() })),
  /** Highest first (by `rank_by`). */
  by_model: z.array(UsageTotalsSchema.extend({ model: z.string() })),
  by_alert_type: z.array(UsageTotalsSchema.extend({ alert_type: z.string() })),
  by_chain: z.array(UsageTotalsSchema.extend({ chain_id: z.string() })),
  top_sessions: z.array(
    UsageTotalsSchema.omit({ sessions: true }).extend({
      session_id: IdSchema,
      alert_type: z.string(),
      chain_id: z.string(),
      status: SessionStatusSchema,
      created_at: TimestampSchema,
    }),
  ),
});
export type UsageSummaryResponse = z.infer<typeof UsageSummaryResponseSchema>;

/**
 * `GET /api/v1/usage/series`: the estimated cost of the sessions created in [start_date,
 * end_date) (same bounds and defaults as the summary: the last 30 days), per calendar day of
 * `timezone` (an IANA name, default UTC) and per model, for the Usage page's charts. The window
 * must not be empty nor longer than 365 days; a bad bound or an unknown zone is 400
 * `validation_failed`. Only sessions of projects the caller may read count.
 */
export const UsageSeriesQuerySchema = z
  .object({
    start_date: DateBoundSchema.optional(),
    end_date: DateBoundSchema.optional(),
    alert_type: z.string().min(1).optional(),
    chain_id: z.string().min(1).optional(),
    /** An IANA time zone name (`Europe/Berlin`); default `UTC`. Offsets are refused. */
    timezone: z.string().min(1).max(64).optional(),
  })
  .strict();
export type UsageSeriesQuery = z.infer<typeof UsageSeriesQuerySchema>;

export const UsageSeriesModelCostSchema = z.object({
  model_name: z.string(),
  estimated_cost_usd: z.number().positive(),
});

export const UsageSeriesPointSchema = z.object({
  /** The local calendar date of the day (`YYYY-MM-DD` in `timezone`). */
  date: z.iso.date(),
  /** The local day clipped to the window: the first and last days can be shorter than a day. */
  start: TimestampSchema,
  end: TimestampSchema,
  /** Live sessions created that local day, with or without LLM interactions. */
  session_count: z.number().int().nonnegative(),
  /** The priced cost of those sessions' interactions: `by_model` plus `other_models`. */
  estimated_cost_usd: z.number().nonnegative(),
  /** `estimated_cost_usd / session_count`; absent on a day without sessions. */
  average_cost_usd: z.number().nonnegative().optional(),
  /** The cost of each of `models` that day; a missing key is zero. */
  by_model: z.record(z.string(), z.number().positive()),
  /** The other models with a cost that day, cost descending then name; absent when none. */
  other_models: z.array(UsageSeriesModelCostSchema).min(1).optional(),
});
export type UsageSeriesPoint = z.infer<typeof UsageSeriesPointSchema>;

export const UsageSeriesResponseSchema = z.discriminatedUnion("cost_estimation_enabled", [
  z.object({
    cost_estimation_enabled: z.literal(true),
    /** The window actually used (instants, UTC). */
    window: z.object({ start: TimestampSchema, end: TimestampSchema }),
    /** The zone whose calendar days the points are. */
    timezone: z.string(),
    bucket: z.literal("day"),
    /** Over the interactions of the window's sessions, as in the summary. */
    cost_completeness: CostCompletenessSchema,
    unpriced_interaction_count: z.number().int().nonnegative(),
    unpriced_token_count: z.number().int().nonnegative(),
    /** Up to 6 models with a positive window cost, largest first then by name: the stack order. */
    models: z.array(z.string()).max(6),
    /** Every local day of the window, oldest first, the days without sessions as zeros. */
    points: z.array(UsageSeriesPointSchema),
  }),
  /** Cost estimation is off (`system.cost_estimation.enabled: false`): nothing to chart. */
  z.object({ cost_estimation_enabled: z.literal(false) }),
]);
export type UsageSeriesResponse = z.infer<typeof UsageSeriesResponseSchema>;
