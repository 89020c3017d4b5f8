/**
 * Where a session's time goes, hop by hop, read back from what the services stored: the
 * session's, stages' and executions' timestamps and every LLM and MCP interaction's duration.
 * Along the critical path (stages run in order; of parallel agents, the one that finished last).
 */
import type { Sql } from "postgres";

/** The hops of one session, in milliseconds, in the order they happen. */
export interface Hops {
  /** Alert accepted (session row) → the orchestrator started the session. */
  accepted_to_started: number;
  /** Session started, or the previous stage completed → the next stage row exists. */
  to_next_stage: number;
  /** Stage row → stage started. */
  stage_started: number;
  /** Stage started → its (last-finishing) execution started in agent-runner. */
  execution_started: number;
  /** Execution started → its first LLM request left. */
  to_first_llm_request: number;
  /** The LLM's own time (every call of the execution). */
  llm: number;
  /** MCP tool calls, as mcp-gateway timed them (start of the server, the call, masking). */
  tools: number;
  /** The rest of the execution: between and after calls (prompts, storage, events). */
  runner_other: number;
  /** Execution completed → stage completed. */
  stage_completed: number;
  /** Last stage completed → session completed (the executive summary included). */
  to_session_completed: number;
  /** Alert accepted → session completed. */
  wall: number;
}

export const HOP_NAMES: { key: keyof Hops; label: string }[] = [
  { key: "accepted_to_started", label: "alert accepted → session started" },
  { key: "to_next_stage", label: "→ stage created (each stage)" },
  { key: "stage_started", label: "stage created → started" },
  { key: "execution_started", label: "stage started → execution started" },
  { key: "to_first_llm_request", label: "execution started → first LLM request" },
  { key: "llm", label: "LLM (raw, every call)" },
  { key: "tools", label: "MCP tool calls (as the gateway timed them)" },
  { key: "runner_other", label: "agent-runner, between and after calls" },
  { key: "stage_completed", label: "execution finished → stage completed" },
  { key: "to_session_completed", label: "last stage → session completed (+summary)" },
  { key: "wall", label: "wall: alert accepted → completed" },
];

const ms = (a: Date | null, b: Date | null) => (a && b ? b.getTime() - a.getTime() : 0);

/** The hop breakdown of one completed session. */
export async function sessionHops(sql: Sql, sessionId: string): Promise<Hops> {
  const [session] = await sql<{ created_at: Date; started_at: Date; completed_at: Date }[]>`
    SELECT created_at, started_at, completed_at FROM alert_sessions WHERE id = ${sessionId}`;
  if (!session) throw new Error(`no session ${sessionId}`);
  const stages = await sql<
    { id: string; created_at: Date; started_at: Date | null; completed_at: Date | null }[]
  >`
    SELECT id, created_at, started_at, completed_at FROM stages
    WHERE session_id = ${sessionId} ORDER BY stage_index`;
  const executions = await sql<
    { id: string; stage_id: string; started_at: Date | null; completed_at: Date | null }[]
  >`
    SELECT id, stage_id, started_at, completed_at FROM agent_executions
    WHERE session_id = ${sessionId}`;
  const calls = await sql<
    { execution_id: string; kind: "llm" | "mcp"; created_at: Date; duration_ms: number | null }[]
  >`
    SELECT execution_id, 'llm' AS kind, created_at, duration_ms FROM llm_interactions
      WHERE session_id = ${sessionId} AND execution_id IS NOT NULL
    UNION ALL
    SELECT execution_id, 'mcp' AS kind, created_at, duration_ms FROM mcp_interactions
      WHERE session_id = ${sessionId} AND execution_id IS NOT NULL`;

  const hops: Hops = {
    accepted_to_started: ms(session.created_at, session.started_at),
    to_next_stage: 0,
    stage_started: 0,
    execution_started: 0,
    to_first_llm_request: 0,
    llm: 0,
    tools: 0,
    runner_other: 0,
    stage_completed: 0,
    to_session_completed: 0,
    wall: ms(session.created_at, session.completed_at),
  };
  let previousEnd = session.started_at;
  for (const stage of stages) {
    hops.to_next_stage += ms(previousEnd, stage.created_at);
    hops.stage_started += ms(stage.created_at, stage.started_at);
    // The execution that finished last holds the stage up.
    const last = executions
      .filter((e) => e.stage_id === stage.id && e.completed_at)
      .sort((a, b) => ms(b.completed_at, a.completed_at))[0];
    if (last) {
      hops.execution_started += ms(stage.started_at, last.started_at);
      const own = calls.filter((c) => c.execution_id === last.id);
      const llm = own.filter((c) => c.kind === "llm");
      const firstLlm = llm
        .map((c) => c.created_at.getTime() - (c.duration_ms ?? 0))
        .sort((a, b) => a - b)[0];
      if (firstLlm !== undefined && last.started_at) {
        hops.to_first_llm_request += Math.max(0, firstLlm - last.started_at.getTime());
      }
      const llmMs = llm.reduce((s, c) => s + (c.duration_ms ?? 0), 0);
      const toolMs = own
        .filter((c) => c.kind === "mcp")
        .reduce((s, c) => s + (c.duration_ms ?? 0), 0);
      hops.llm += llmMs;
      hops.tools += toolMs;
      const executionMs = ms(last.started_at, last.completed_at);
      const firstGap =
        firstLlm !== undefined && last.started_at ? firstLlm - last.started_at.getTime() : 0;
      hops.runner_other += Math.max(0, executionMs - llmMs - toolMs - Math.max(0, firstGap));
      hops.stage_completed += ms(last.completed_at, stage.completed_at);
    }
    previousEnd = stage.completed_at ?? previousEnd;
  }
  hops.to_session_completed = ms(previousEnd, session.completed_at);
  return hops;
}

/** Median of each hop over sessions, as table rows. */
export function medianHops(all: Hops[]): { label: string; ms: number }[] {
  return HOP_NAMES.map(({ key, label }) => {
    const values = all.map((h) => h[key]).sort((a, b) => a - b);
    return { label, ms: values[Math.floor(values.length / 2)] ?? 0 };
  });
}
