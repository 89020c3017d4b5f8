/**
 * Aggregates of sessions for the API's list, active view, detail and summary: interaction
 * counts, token sums, stage counts and chat messages. One SQL statement for a whole page of
 * sessions (GROUP BY per table over the page's ids), never one query per session.
 */
import type { DbClient } from "./client.ts";

export interface SessionStats {
  readonly llmInteractionCount: number;
  readonly mcpInteractionCount: number;
  /** Sums over the session's LLM interactions (null token counts count as 0). */
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly totalTokens: number;
  /** Every stage row of the session, chat stages included. */
  readonly totalStages: number;
  readonly completedStages: number;
  readonly failedStages: number;
  readonly hasParallelStages: boolean;
  readonly chatMessageCount: number;
}

export const EMPTY_SESSION_STATS: SessionStats = {
  llmInteractionCount: 0,
  mcpInteractionCount: 0,
  inputTokens: 0,
  outputTokens: 0,
  totalTokens: 0,
  totalStages: 0,
  completedStages: 0,
  failedStages: 0,
  hasParallelStages: false,
  chatMessageCount: 0,
};

interface StatsRow {
  id: string;
  llm_count: number;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  mcp_count: number;
  total_stages: number;
  completed_stages: number;
  failed_stages: number;
  has_parallel: boolean;
  chat_messages: number;
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
             COALESCE(SUM(total_tokens), 0)::float8 AS total_tokens
      FROM llm_interactions WHERE session_id IN (SELECT id FROM ids) GROUP BY session_id),
    mcp AS (
      SELECT session_id, COUNT(*)::int AS n
      FROM mcp_interactions WHERE session_id IN (SELECT id FROM ids) GROUP BY session_id),
    st AS (
      SELECT session_id, COUNT(*)::int AS total,
             (COUNT(*) FILTER (WHERE status = 'completed'))::int AS completed,
             (COUNT(*) FILTER (WHERE status = 'failed'))::int AS failed,
             BOOL_OR(parallel_type IS NOT NULL) AS parallel
      FROM stages WHERE session_id IN (SELECT id FROM ids) GROUP BY session_id),
    chat AS (
      SELECT c.session_id, COUNT(m.id)::int AS n
      FROM chats c JOIN chat_user_messages m ON m.chat_id = c.id
      WHERE c.session_id IN (SELECT id FROM ids) GROUP BY c.session_id)
    SELECT ids.id::text AS id,
           COALESCE(llm.n, 0) AS llm_count,
           COALESCE(llm.input_tokens, 0) AS input_tokens,
           COALESCE(llm.output_tokens, 0) AS output_tokens,
           COALESCE(llm.total_tokens, 0) AS total_tokens,
           COALESCE(mcp.n, 0) AS mcp_count,
           COALESCE(st.total, 0) AS total_stages,
           COALESCE(st.completed, 0) AS completed_stages,
           COALESCE(st.failed, 0) AS failed_stages,
           COALESCE(st.parallel, false) AS has_parallel,
           COALESCE(chat.n, 0) AS chat_messages
    FROM ids
    LEFT JOIN llm ON llm.session_id = ids.id
    LEFT JOIN mcp ON mcp.session_id = ids.id
    LEFT JOIN st ON st.session_id = ids.id
    LEFT JOIN chat ON chat.session_id = ids.id`;
  for (const r of rows) {
    result.set(r.id, {
      llmInteractionCount: Number(r.llm_count),
      mcpInteractionCount: Number(r.mcp_count),
      inputTokens: Number(r.input_tokens),
      outputTokens: Number(r.output_tokens),
      totalTokens: Number(r.total_tokens),
      totalStages: Number(r.total_stages),
      completedStages: Number(r.completed_stages),
      failedStages: Number(r.failed_stages),
      hasParallelStages: r.has_parallel === true,
      chatMessageCount: Number(r.chat_messages),
    });
  }
  return result;
}

/** The aggregates of one session (zeros when it has no rows yet). */
export async function getOneSessionStats(client: DbClient, id: string): Promise<SessionStats> {
  return (await getSessionStats(client, [id])).get(id) ?? EMPTY_SESSION_STATS;
}
