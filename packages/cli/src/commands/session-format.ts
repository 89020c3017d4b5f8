import {
  describeCancel,
  type ForcedConclusionReason,
  forcedConclusionLabel,
  type SessionDetail,
  type SessionSummary,
  type TimelineResponse,
} from "@tarsy/contracts";

type Tokens = SessionDetail["token_usage"];

function tokens(t: Tokens): string {
  const thinking = t.thinking_tokens > 0 ? `, ${t.thinking_tokens} thinking` : "";
  return `${t.total_tokens} tokens (${t.input_tokens} in, ${t.output_tokens} out${thinking})`;
}

export function duration(ms: number | null): string {
  if (ms === null) return "";
  return ms < 1_000 ? `${ms} ms` : `${(ms / 1_000).toFixed(1)} s`;
}

function indent(text: string, prefix = "  "): string {
  return text
    .split("\n")
    .map((line) => (line ? `${prefix}${line}` : line))
    .join("\n");
}

/** The runbook's URL (or "default") and how it was resolved: fetched, or fell back and why. */
function runbookLine(session: SessionDetail): string | undefined {
  const { runbook_url: url, runbook } = session;
  if (!url && !runbook) return undefined;
  const where = url ?? "default";
  if (!runbook) return where;
  if (runbook.source === "fetched") return `${where} (fetched)`;
  const used = runbook.source === "default" ? "default runbook" : "no runbook";
  return runbook.error
    ? `${where} (${used}; fetch failed: ${runbook.error})`
    : `${where} (${used})`;
}

/**
 * What follows the status: who cancelled a cancelled session and why (a cancellation, not an
 * error), else the session's error.
 */
function statusDetail(session: SessionSummary): string {
  if (session.status === "cancelled") {
    const by = describeCancel(session);
    return by ? ` — ${by}` : "";
  }
  return session.error_message ? ` — ${session.error_message}` : "";
}

/** A readable summary of a session: status, stages and executions, analysis, tokens. */
export function formatSession(session: SessionDetail, timeline: TimelineResponse): string {
  const out: string[] = [];
  out.push(`Session ${session.id}`);
  out.push(`  Status:      ${session.status}${statusDetail(session)}`);
  out.push(`  Alert type:  ${session.alert_type}`);
  out.push(`  Chain:       ${session.chain_id}`);
  // Null: not labelled (running, no summary, or its LABELS line was unreadable).
  if (session.labels !== null) {
    out.push(`  Labels:      ${session.labels.length > 0 ? session.labels.join(", ") : "(none)"}`);
  }
  if (session.author) out.push(`  Author:      ${session.author}`);
  const runbook = runbookLine(session);
  if (runbook) out.push(`  Runbook:     ${runbook}`);
  out.push(`  Created:     ${session.created_at}`);
  if (session.completed_at) {
    out.push(`  Completed:   ${session.completed_at} (${duration(session.duration_ms)})`);
  }
  out.push(`  Tokens:      ${tokens(session.token_usage)}`);
  out.push("");
  out.push(`Stages (${session.stages.length}):`);
  const eventsByStage = new Map<string, number>();
  for (const event of timeline.events) {
    if (event.stage_id)
      eventsByStage.set(event.stage_id, (eventsByStage.get(event.stage_id) ?? 0) + 1);
  }
  for (const stage of session.stages) {
    const parallel = stage.parallel_type
      ? `, ${stage.parallel_type}${stage.success_policy ? ` policy ${stage.success_policy}` : ""}`
      : "";
    const count = eventsByStage.get(stage.id) ?? 0;
    out.push(
      `  ${stage.stage_index}. ${stage.stage_name} [${stage.kind}${parallel}] ${stage.status}, ${count} timeline event${count === 1 ? "" : "s"}${stage.error_message ? ` — ${stage.error_message}` : ""}`,
    );
    for (const execution of stage.executions) {
      const llm = [execution.llm_provider, execution.llm_backend].filter(Boolean).join("/");
      out.push(
        `     - ${execution.agent_name} (${execution.kind}${llm ? `, ${llm}` : ""}) ${execution.status}${forced(execution.forced_conclusion)}, ${tokens(execution.token_usage)}${execution.error_message ? ` — ${execution.error_message}` : ""}`,
      );
    }
  }
  out.push("");
  out.push("Final analysis:");
  out.push(session.final_analysis ? indent(session.final_analysis) : "  (none yet)");
  out.push("");
  out.push("Executive summary:");
  if (session.executive_summary) out.push(indent(session.executive_summary));
  else if (session.executive_summary_error) {
    out.push(`  (failed: ${session.executive_summary_error})`);
  } else out.push("  (none yet)");
  if (session.chat && session.chat.messages.length > 0) {
    out.push("");
    out.push(
      `Chat (${session.chat.messages.length} message${session.chat.messages.length === 1 ? "" : "s"}):`,
    );
    for (const message of session.chat.messages)
      out.push(`  ${message.author}: ${message.content}`);
  }
  return `${out.join("\n")}\n`;
}

/** ` (forced conclusion: time budget)` for an agent made to conclude; else "". */
function forced(reason: ForcedConclusionReason | null): string {
  return reason ? ` (forced conclusion: ${forcedConclusionLabel(reason)})` : "";
}
