/**
 * LLM usage and estimated cost over a window of time: the sums of the LLM interactions written
 * in [start, end), grouped by UTC day, model, alert type and chain (one statement with grouping
 * sets), and the sessions that used the most (a second statement, ranked and limited in SQL).
 * Deleted sessions never count; `projects` narrows to the caller's visible projects.
 * The series (`getUsageSeries`) is the charts' view: the cost of the sessions created in the
 * window, per calendar day of a timezone and per model.
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
  /** Prompt-cache reads and writes (inputTokens is the uncached input). */
  readonly cacheReadTokens: number;
  readonly cacheCreationTokens: number;
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
  cache_read_tokens: number;
  cache_creation_tokens: number;
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
  COALESCE(SUM(b.cache_read_tokens), 0)::float8 AS cache_read_tokens,
  COALESCE(SUM(b.cache_creation_tokens), 0)::float8 AS cache_creation_tokens,
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
           i.thinking_tokens, i.total_tokens, i.cache_read_tokens, i.cache_creation_tokens,
           i.estimated_cost_usd, i.cost_status,
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
    cacheReadTokens: Number(r.cache_read_tokens),
    cacheCreationTokens: Number(r.cache_creation_tokens),
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
  cache_read_tokens: 0,
  cache_creation_tokens: 0,
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

// ---------------------------------------------------------------------------------------------
// The usage series: estimated cost per calendar day of a timezone, by model, for the charts.

export interface UsageSeriesFilter {
  /** Inclusive. */
  readonly start: Date;
  /** Exclusive. */
  readonly end: Date;
  /** An IANA name (validated by the caller); the days are this zone's calendar days. */
  readonly timeZone: string;
  readonly alertType?: string;
  readonly chainId?: string;
  /** Only sessions of these projects; none: every project. */
  readonly projects?: readonly string[];
}

export interface UsageSeriesModelCost {
  readonly modelName: string;
  readonly estimatedCostUsd: number;
}

export interface UsageSeriesPoint {
  /** The local calendar date, `YYYY-MM-DD`. */
  readonly date: string;
  /** The local day clipped to the window: the first and last days can be shorter. */
  readonly start: Date;
  readonly end: Date;
  /** Live sessions created that local day (with or without LLM interactions). */
  readonly sessionCount: number;
  /** The priced cost of those sessions' interactions: `byModel` plus `otherModels`. */
  readonly estimatedCostUsd: number;
  /** Cost of the named models (`UsageSeries.models`) that day; a missing key is zero. */
  readonly byModel: Readonly<Record<string, number>>;
  /** The other models with a non-zero cost that day, cost descending then name. */
  readonly otherModels: readonly UsageSeriesModelCost[];
}

export interface UsageSeries {
  /** Up to six models with a positive window cost, largest first then by name. */
  readonly models: readonly string[];
  /** Every local day of the window, oldest first, the days without sessions as zeros. */
  readonly points: readonly UsageSeriesPoint[];
  readonly costCompleteness: UsageCompleteness;
  readonly unpricedInteractions: number;
  readonly unpricedTokens: number;
}

/** How many models get a series of their own; the rest are summed as "other". */
export const USAGE_SERIES_NAMED_MODELS = 6;

/** PostgreSQL refused the time zone name (22023: `time zone "…" not recognized`). */
export class UnknownTimeZoneError extends Error {
  constructor(readonly timeZone: string) {
    super(`time zone "${timeZone}" is not recognized by the database`);
    this.name = "UnknownTimeZoneError";
  }
}

interface SeriesDayRow {
  day: string;
  start: Date;
  end: Date;
  sessions: number;
}

interface SeriesCostRow {
  /** 0: a day and model; 1: the window's totals. */
  grouping: number;
  day: string | null;
  model_name: string | null;
  cost: number;
  n: number;
  priced: number;
  unpriced_tokens: number;
}

const byCostThenName = (a: [string, number], b: [string, number]) =>
  b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);

/**
 * The window's sessions (live, visible, filtered, created in [start, end)) by the local day of
 * their creation, and the priced cost of all their interactions by that day and model: the
 * calendar (days, DST, clipping) is PostgreSQL's `AT TIME ZONE`, two statements per call.
 */
export async function getUsageSeries(
  client: DbClient,
  filter: UsageSeriesFilter,
): Promise<UsageSeries> {
  const tz = filter.timeZone;
  const zone = Prisma.sql`${tz}::text`;
  const conditions = [
    Prisma.sql`s.created_at >= ${filter.start}`,
    Prisma.sql`s.created_at < ${filter.end}`,
    Prisma.sql`s.deleted_at IS NULL`,
  ];
  if (filter.projects !== undefined) {
    conditions.push(Prisma.sql`s.project = ANY(${[...filter.projects]}::text[])`);
  }
  if (filter.alertType !== undefined)
    conditions.push(Prisma.sql`s.alert_type = ${filter.alertType}`);
  if (filter.chainId !== undefined) conditions.push(Prisma.sql`s.chain_id = ${filter.chainId}`);
  const sessions = Prisma.sql`
    SELECT s.id, (s.created_at AT TIME ZONE ${zone})::date AS day
    FROM alert_sessions s WHERE ${Prisma.join(conditions, " AND ")}`;
  const start = Prisma.sql`${filter.start}::timestamptz`;
  const end = Prisma.sql`${filter.end}::timestamptz`;
  let dayRows: SeriesDayRow[];
  let costRows: SeriesCostRow[];
  try {
    [dayRows, costRows] = await Promise.all([
      client.$queryRaw<SeriesDayRow[]>`
        WITH w AS (${sessions}),
        days AS (
          SELECT g::date AS day
          FROM generate_series(
            (${start} AT TIME ZONE ${zone})::date,
            ((${end} - interval '1 microsecond') AT TIME ZONE ${zone})::date,
            interval '1 day') AS g
        )
        SELECT to_char(d.day, 'YYYY-MM-DD') AS day,
               GREATEST(${start}, d.day::timestamp AT TIME ZONE ${zone}) AS start,
               LEAST(${end}, (d.day + 1)::timestamp AT TIME ZONE ${zone}) AS end,
               (SELECT COUNT(*) FROM w WHERE w.day = d.day)::int AS sessions
        FROM days d ORDER BY d.day`,
      client.$queryRaw<SeriesCostRow[]>`
        WITH w AS (${sessions})
        SELECT (CASE WHEN GROUPING(w.day, i.model_name) = 0 THEN 0 ELSE 1 END)::int AS grouping,
               to_char(w.day, 'YYYY-MM-DD') AS day, i.model_name,
               COALESCE(SUM(i.estimated_cost_usd) FILTER (WHERE i.cost_status = 'priced'), 0)::float8
                 AS cost,
               COUNT(*)::int AS n,
               (COUNT(*) FILTER (WHERE i.cost_status = 'priced'))::int AS priced,
               COALESCE(SUM(i.total_tokens) FILTER (WHERE i.cost_status IS DISTINCT FROM 'priced'), 0)::float8
                 AS unpriced_tokens
        FROM w JOIN llm_interactions i ON i.session_id = w.id
        GROUP BY GROUPING SETS ((w.day, i.model_name), ())`,
    ]);
  } catch (err) {
    if (/time zone .* not recognized/i.test(String((err as Error)?.message))) {
      throw new UnknownTimeZoneError(tz);
    }
    throw err;
  }

  let n = 0;
  let priced = 0;
  let unpricedTokens = 0;
  const windowCost = new Map<string, number>();
  const dayCosts = new Map<string, Map<string, number>>();
  for (const r of costRows) {
    if (Number(r.grouping) === 1) {
      n = Number(r.n);
      priced = Number(r.priced);
      unpricedTokens = Number(r.unpriced_tokens);
      continue;
    }
    const model = r.model_name ?? "";
    const cost = Number(r.cost);
    windowCost.set(model, (windowCost.get(model) ?? 0) + cost);
    const day = dayCosts.get(r.day ?? "") ?? new Map<string, number>();
    day.set(model, cost);
    dayCosts.set(r.day ?? "", day);
  }
  const models = [...windowCost]
    .filter(([, cost]) => cost > 0)
    .sort(byCostThenName)
    .slice(0, USAGE_SERIES_NAMED_MODELS)
    .map(([model]) => model);
  const named = new Set(models);

  const points = dayRows.map((d): UsageSeriesPoint => {
    const byModel: Record<string, number> = {};
    const others: [string, number][] = [];
    let total = 0;
    for (const [model, cost] of dayCosts.get(d.day) ?? []) {
      if (cost <= 0) continue;
      total += cost;
      if (named.has(model)) byModel[model] = cost;
      else others.push([model, cost]);
    }
    return {
      date: d.day,
      start: new Date(d.start),
      end: new Date(d.end),
      sessionCount: Number(d.sessions),
      estimatedCostUsd: total,
      byModel,
      otherModels: others
        .sort(byCostThenName)
        .map(([modelName, estimatedCostUsd]) => ({ modelName, estimatedCostUsd })),
    };
  });
  return {
    models,
    points,
    costCompleteness: completeness(n, priced),
    unpricedInteractions: n - priced,
    unpricedTokens,
  };
}
