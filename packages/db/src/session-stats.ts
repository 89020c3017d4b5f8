/**
 * Aggregates of sessions for the API's list, active view, detail and summary: interaction
 * counts, token sums, estimated cost, stage counts and chat messages. One SQL statement for a whole page of
 * sessions (GROUP BY per table over the page's ids), never one query per session.
 */
import type { DbClient } from "./client.ts";
import { Prisma } from "./generated/prisma/client.ts";

/** Estimated cost of a set of LLM interactions (estimates made once, when each was written). */
export interface CostSums {
  /** LLM interactions in the set. */
  readonly interactions: number;
  /** Those with `cost_status` priced (the others: unpriced, disabled, or written before). */
  readonly priced: number;
  /** USD over the priced ones. */
  readonly usd: number;
}

export const NO_COST: CostSums = { interactions: 0, priced: 0, usd: 0 };

const PRICED_COUNT = Prisma.sql`(COUNT(*) FILTER (WHERE cost_status = 'priced'))::int`;
const PRICED_USD = Prisma.sql`COALESCE(SUM(estimated_cost_usd) FILTER (WHERE cost_status = 'priced'), 0)::float8`;

export interface SessionStats {
  readonly llmInteractionCount: number;
  readonly mcpInteractionCount: number;
  /** Sums over the session's LLM interactions (null token counts count as 0). */
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly totalTokens: number;
  /** The session's LLM interactions' estimates: their count, how many were priced, the USD sum. */
  readonly cost: CostSums;
  /** Every stage row of the session, chat stages included. */
  readonly totalStages: number;
  readonly completedStages: number;
  readonly failedStages: number;
  readonly hasParallelStages: boolean;
  /** Some stage is an action stage (its agents may have acted on the system). */
  readonly hasActionStages: boolean;
  readonly chatMessageCount: number;
  /** The latest completed score (0–100), or null. */
  readonly latestScore: number | null;
  /** Where the latest scoring run stands (null: never scored). */
  readonly scoringStatus: "in_progress" | "completed" | "failed" | null;
}

export const EMPTY_SESSION_STATS: SessionStats = {
  llmInteractionCount: 0,
  mcpInteractionCount: 0,
  inputTokens: 0,
  outputTokens: 0,
  totalTokens: 0,
  cost: { interactions: 0, priced: 0, usd: 0 },
  totalStages: 0,
  completedStages: 0,
  failedStages: 0,
  hasParallelStages: false,
  hasActionStages: false,
  chatMessageCount: 0,
  latestScore: null,
  scoringStatus: null,
};

interface StatsRow {
  id: string;
  llm_count: number;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  priced: number;
  cost_usd: number;
  mcp_count: number;
  total_stages: number;
  completed_stages: number;
  failed_stages: number;
  has_parallel: boolean;
  has_action: boolean;
  chat_messages: number;
  latest_score: number | null;
  scoring_status: "in_progress" | "completed" | "failed" | null;
}

/**
 * The aggregates of each of `ids`, keyed by id (every id present; unknown ids get zeros).
 * One round trip whatever the number of ids.
 */
export async function getSessionStats(
  client: DbClient,
  ids: readonly string[],
): Promise<Map<string, SessionStats>> {
  const result = new Map<string, SessionStats>();
  if (ids.length === 0) return result;
  const list = [...new Set(ids)];
  // Counts are cast to int (bigint would come back as a JS bigint); token sums to bigint
  // then float8, so a long session's sum cannot overflow int4.
  const rows = await client.$queryRaw<StatsRow[]>`
    WITH ids AS (SELECT unnest(${list}::uuid[]) AS id),
    llm AS (
      SELECT session_id, COUNT(*)::int AS n,
             COALESCE(SUM(input_tokens), 0)::float8 AS input_tokens,
             COALESCE(SUM(output_tokens), 0)::float8 AS output_tokens,
             COALESCE(SUM(total_tokens), 0)::float8 AS total_tokens,
             ${PRICED_COUNT} AS priced,
             ${PRICED_USD} AS cost_usd
      FROM llm_interactions WHERE session_id IN (SELECT id FROM ids) GROUP BY session_id),
    mcp AS (
      SELECT session_id, COUNT(*)::int AS n
      FROM mcp_interactions WHERE session_id IN (SELECT id FROM ids) GROUP BY session_id),
    st AS (
      SELECT session_id, COUNT(*)::int AS total,
             (COUNT(*) FILTER (WHERE status = 'completed'))::int AS completed,
             (COUNT(*) FILTER (WHERE status = 'failed'))::int AS failed,
             BOOL_OR(parallel_type IS NOT NULL) AS parallel,
             BOOL_OR(kind = 'action') AS action
      FROM stages WHERE session_id IN (SELECT id FROM ids) GROUP BY session_id),
    chat AS (
      SELECT c.session_id, COUNT(m.id)::int AS n
      FROM chats c JOIN chat_user_messages m ON m.chat_id = c.id
      WHERE c.session_id IN (SELECT id FROM ids) GROUP BY c.session_id),
    last_run AS (
      SELECT DISTINCT ON (session_id) session_id, status::text AS status
      FROM session_scores WHERE session_id IN (SELECT id FROM ids)
      ORDER BY session_id, started_at DESC, id DESC),
    last_score AS (
      SELECT DISTINCT ON (session_id) session_id, total_score
      FROM session_scores
      WHERE session_id IN (SELECT id FROM ids) AND status = 'completed'
      ORDER BY session_id, completed_at DESC, id DESC)
    SELECT ids.id::text AS id,
           COALESCE(llm.n, 0) AS llm_count,
           COALESCE(llm.input_tokens, 0) AS input_tokens,
           COALESCE(llm.output_tokens, 0) AS output_tokens,
           COALESCE(llm.total_tokens, 0) AS total_tokens,
           COALESCE(llm.priced, 0) AS priced,
           COALESCE(llm.cost_usd, 0) AS cost_usd,
           COALESCE(mcp.n, 0) AS mcp_count,
           COALESCE(st.total, 0) AS total_stages,
           COALESCE(st.completed, 0) AS completed_stages,
           COALESCE(st.failed, 0) AS failed_stages,
           COALESCE(st.parallel, false) AS has_parallel,
           COALESCE(st.action, false) AS has_action,
           COALESCE(chat.n, 0) AS chat_messages,
           last_score.total_score AS latest_score,
           last_run.status AS scoring_status
    FROM ids
    LEFT JOIN llm ON llm.session_id = ids.id
    LEFT JOIN mcp ON mcp.session_id = ids.id
    LEFT JOIN st ON st.session_id = ids.id
    LEFT JOIN chat ON chat.session_id = ids.id
    LEFT JOIN last_run ON last_run.session_id = ids.id
    LEFT JOIN last_score ON last_score.session_id = ids.id`;
  for (const r of rows) {
    result.set(r.id, {
      llmInteractionCount: Number(r.llm_count),
      mcpInteractionCount: Number(r.mcp_count),
      inputTokens: Number(r.input_tokens),
      outputTokens: Number(r.output_tokens),
      totalTokens: Number(r.total_tokens),
      cost: {
        interactions: Number(r.llm_count),
        priced: Number(r.priced),
        usd: Number(r.cost_usd),
      },
      totalStages: Number(r.total_stages),
      completedStages: Number(r.completed_stages),
      failedStages: Number(r.failed_stages),
      hasParallelStages: r.has_parallel === true,
      hasActionStages: r.has_action === true,
      chatMessageCount: Number(r.chat_messages),
      latestScore: r.latest_score === null ? null : Number(r.latest_score),
      scoringStatus: r.scoring_status,
    });
  }
  return result;
}

/** The aggregates of one session (zeros when it has no rows yet). */
export async function getOneSessionStats(client: DbClient, id: string): Promise<SessionStats> {
  return (await getSessionStats(client, [id])).get(id) ?? EMPTY_SESSION_STATS;
}

/** The cost of each stage (its executions' interactions and its own) and of each execution. */
export interface SessionCostBreakdown {
  readonly byStage: ReadonlyMap<string, CostSums>;
  readonly byExecution: ReadonlyMap<string, CostSums>;
}

interface CostRow {
  by_stage: boolean;
  key: string | null;
  n: number;
  priced: number;
  usd: number;
}

/** One statement: the session's LLM interactions grouped by stage and, apart, by execution. */
export async function getSessionCostBreakdown(
  client: DbClient,
  sessionId: string,
): Promise<SessionCostBreakdown> {
  const rows = await client.$queryRaw<CostRow[]>`
    SELECT GROUPING(execution_id) = 1 AS by_stage,
           COALESCE(stage_id, execution_id)::text AS key,
           COUNT(*)::int AS n, ${PRICED_COUNT} AS priced, ${PRICED_USD} AS usd
    FROM llm_interactions WHERE session_id = ${sessionId}::uuid
    GROUP BY GROUPING SETS ((stage_id), (execution_id))`;
  const byStage = new Map<string, CostSums>();
  const byExecution = new Map<string, CostSums>();
  for (const r of rows) {
    if (r.key === null) continue;
    const sums = { interactions: Number(r.n), priced: Number(r.priced), usd: Number(r.usd) };
    (r.by_stage ? byStage : byExecution).set(r.key, sums);
  }
  return { byStage, byExecution };
}
