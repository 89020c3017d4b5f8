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
