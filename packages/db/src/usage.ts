/**
 * LLM usage and estimated cost over a window of time: the sums of the LLM interactions written
 * in [start, end), grouped by UTC day, model, alert type and chain (one statement with grouping
 * sets), and the sessions that used the most (a second statement, ranked and limited in SQL).
 * Deleted sessions never count; `projects` narrows to the caller's visible projects.
 */

import type { DbClient } from "./client.ts";
import { Prisma } from "./generated/prisma/client.ts";

export type UsageRankBy = "cost" | "tokens";
export type UsageCompleteness = "complete" | "partial" | "none";

export interface UsageFilter {
  /** Inclusive. */
  readonly start: Date;
  /** Exclusive. */
  readonly end: Date;
  readonly alertType?: string;
  readonly chainId?: string;
  /** Only sessions of these projects; none: every project. */
  readonly projects?: readonly string[];
  readonly rankBy: UsageRankBy;
  /** How many top sessions. */
  readonly top: number;
}

export interface UsageTotals {
  readonly sessions: number;
  readonly llmInteractions: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly thinkingTokens: number;
  readonly totalTokens: number;
  /** USD over the priced interactions. */
  readonly estimatedCostUsd: number;
  /** Interactions not priced: no known rate, estimation disabled, or written before it. */
  readonly unpricedInteractions: number;
  readonly costCompleteness: UsageCompleteness;
}

export interface UsageTopSession extends UsageTotals {
  readonly sessionId: string;
  readonly alertType: string;
  readonly chainId: string;
  readonly status: string;
  readonly createdAt: Date;
}

export interface UsageSummary {
  readonly totals: UsageTotals;
  /** Oldest first; only days with usage. */
  readonly byDay: readonly (UsageTotals & { readonly date: string })[];
  /** Highest first by `rankBy`. */
  readonly byModel: readonly (UsageTotals & { readonly model: string })[];
  readonly byAlertType: readonly (UsageTotals & { readonly alertType: string })[];
  readonly byChain: readonly (UsageTotals & { readonly chainId: string })[];
  readonly topSessions: readonly UsageTopSession[];
}

interface AggregateRow {
  sessions: number;
  n: number;
  priced: number;
  input_tokens: number;
  output_tokens: number;
  thinking_tokens: number;
  total_tokens: number;
  cost: number;
}

interface GroupedRow extends AggregateRow {
  /** 0 totals, 1 day, 2 model, 3 alert type, 4 chain. */
  grouping: number;
  day: string | null;
  model_name: string | null;
  alert_type: string | null;
  chain_id: string | null;
}

interface SessionRow extends AggregateRow {
  session_id: string;
  alert_type: string;
  chain_id: string;
  status: string;
  created_at: Date;
}

/** The sums every group carries (counts as int, token sums as float8: no bigint, no overflow). */
const AGGREGATES = Prisma.sql`
  COUNT(DISTINCT b.session_id)::int AS sessions,
  COUNT(*)::int AS n,
  (COUNT(*) FILTER (WHERE b.cost_status = 'priced'))::int AS priced,
  COALESCE(SUM(b.input_tokens), 0)::float8 AS input_tokens,
  COALESCE(SUM(b.output_tokens), 0)::float8 AS output_tokens,
  COALESCE(SUM(b.thinking_tokens), 0)::float8 AS thinking_tokens,
  COALESCE(SUM(b.total_tokens), 0)::float8 AS total_tokens,
  COALESCE(SUM(b.estimated_cost_usd) FILTER (WHERE b.cost_status = 'priced'), 0)::float8 AS cost`;

/** The interactions of the window, joined to their (live, visible, filtered) sessions. */
function windowed(filter: UsageFilter): Prisma.Sql {
  const conditions = [
    Prisma.sql`i.created_at >= ${filter.start}`,
    Prisma.sql`i.created_at < ${filter.end}`,
    Prisma.sql`s.deleted_at IS NULL`,
  ];
  if (filter.projects !== undefined) {
    conditions.push(Prisma.sql`s.project = ANY(${[...filter.projects]}::text[])`);
  }
  if (filter.alertType !== undefined)
    conditions.push(Prisma.sql`s.alert_type = ${filter.alertType}`);
  if (filter.chainId !== undefined) conditions.push(Prisma.sql`s.chain_id = ${filter.chainId}`);
  return Prisma.sql`
    SELECT i.session_id, i.model_name, i.created_at, i.input_tokens, i.output_tokens,
           i.thinking_tokens, i.total_tokens, i.estimated_cost_usd, i.cost_status,
           s.alert_type, s.chain_id, s.status, s.created_at AS session_created_at
    FROM llm_interactions i JOIN alert_sessions s ON s.id = i.session_id
    WHERE ${Prisma.join(conditions, " AND ")}`;
}

const completeness = (n: number, priced: number): UsageCompleteness =>
  n > 0 && priced === n ? "complete" : priced > 0 ? "partial" : "none";

function totalsOf(r: AggregateRow): UsageTotals {
  const n = Number(r.n);
  const priced = Number(r.priced);
  return {
    sessions: Number(r.sessions),
    llmInteractions: n,
    inputTokens: Number(r.input_tokens),
    outputTokens: Number(r.output_tokens),
    thinkingTokens: Number(r.thinking_tokens),
    totalTokens: Number(r.total_tokens),
    estimatedCostUsd: Number(r.cost),
    unpricedInteractions: n - priced,
    costCompleteness: completeness(n, priced),
  };
}

export const EMPTY_USAGE_TOTALS: UsageTotals = totalsOf({
  sessions: 0,
  n: 0,
  priced: 0,
  input_tokens: 0,
  output_tokens: 0,
  thinking_tokens: 0,
  total_tokens: 0,
  cost: 0,
});

/** Highest first by the ranking measure, then by the other one, then by name (stable). */
function ranked<T extends UsageTotals>(
  items: T[],
  rankBy: UsageRankBy,
  key: (t: T) => string,
): T[] {
  const measures = (t: T) =>
    rankBy === "cost" ? [t.estimatedCostUsd, t.totalTokens] : [t.totalTokens, t.estimatedCostUsd];
  return items.sort((a, b) => {
    const [a1 = 0, a2 = 0] = measures(a);
    const [b1 = 0, b2 = 0] = measures(b);
    return b1 - a1 || b2 - a2 || key(a).localeCompare(key(b));
  });
}

/** The usage summary of a window: two statements, whatever the number of interactions. */
export async function getUsageSummary(
  client: DbClient,
  filter: UsageFilter,
): Promise<UsageSummary> {
  const base = windowed(filter);
  const order =
    filter.rankBy === "cost"
      ? Prisma.sql`cost DESC, total_tokens DESC, b.session_id`
      : Prisma.sql`total_tokens DESC, cost DESC, b.session_id`;
  const [grouped, sessions] = await Promise.all([
    client.$queryRaw<GroupedRow[]>`
      WITH b AS (${base}),
      d AS (SELECT b.*, to_char(b.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day FROM b)
      SELECT (CASE
                WHEN GROUPING(b.day, b.model_name, b.alert_type, b.chain_id) = 15 THEN 0
                WHEN GROUPING(b.day) = 0 THEN 1
                WHEN GROUPING(b.model_name) = 0 THEN 2
                WHEN GROUPING(b.alert_type) = 0 THEN 3
                ELSE 4 END)::int AS grouping,
             b.day, b.model_name, b.alert_type, b.chain_id, ${AGGREGATES}
      FROM d AS b
      GROUP BY GROUPING SETS ((), (b.day), (b.model_name), (b.alert_type), (b.chain_id))`,
    client.$queryRaw<SessionRow[]>`
      WITH b AS (${base})
      SELECT b.session_id::text AS session_id, MIN(b.alert_type) AS alert_type,
             MIN(b.chain_id) AS chain_id, MIN(b.status::text) AS status,
             MIN(b.session_created_at) AS created_at, ${AGGREGATES}
      FROM b GROUP BY b.session_id
      ORDER BY ${order}
      LIMIT ${filter.top}`,
  ]);

  let totals = EMPTY_USAGE_TOTALS;
  const byDay: (UsageTotals & { date: string })[] = [];
  const byModel: (UsageTotals & { model: string })[] = [];
  const byAlertType: (UsageTotals & { alertType: string })[] = [];
  const byChain: (UsageTotals & { chainId: string })[] = [];
  for (const r of grouped) {
    const t = totalsOf(r);
    switch (Number(r.grouping)) {
      case 0:
        totals = t;
        break;
      case 1:
        byDay.push({ ...t, date: r.day ?? "" });
        break;
      case 2:
        byModel.push({ ...t, model: r.model_name ?? "" });
        break;
      case 3:
        byAlertType.push({ ...t, alertType: r.alert_type ?? "" });
        break;
      default:
        byChain.push({ ...t, chainId: r.chain_id ?? "" });
    }
  }
  byDay.sort((a, b) => a.date.localeCompare(b.date));
  return {
    totals,
    byDay,
    byModel: ranked(byModel, filter.rankBy, (m) => m.model),
    byAlertType: ranked(byAlertType, filter.rankBy, (a) => a.alertType),
    byChain: ranked(byChain, filter.rankBy, (c) => c.chainId),
    topSessions: sessions.map((r) => ({
      ...totalsOf(r),
      sessionId: r.session_id,
      alertType: r.alert_type,
      chainId: r.chain_id,
      status: r.status,
      createdAt: new Date(r.created_at),
    })),
  };
}
