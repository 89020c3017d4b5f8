import type {
  LLMInteractionDetail,
  MCPInteractionDetail,
  TraceListResponse,
} from "@tarsy/contracts";
import { duration } from "./session-format.ts";

type LlmItem = TraceListResponse["session_interactions"][number];
type McpItem =
  TraceListResponse["stages"][number]["executions"][number]["mcp_interactions"][number];

function llmTokens(
  i: Pick<LlmItem, "total_tokens" | "input_tokens" | "output_tokens" | "thinking_tokens">,
): string {
  if (i.total_tokens === null) return "no token count";
  const thinking = i.thinking_tokens ? `, ${i.thinking_tokens} thinking` : "";
  return `${i.total_tokens} tokens (${i.input_tokens ?? 0} in, ${i.output_tokens ?? 0} out${thinking})`;
}

const took = (ms: number | null): string => (ms === null ? "-" : duration(ms));
const failed = (error: string | null): string => (error ? ` — error: ${oneLine(error)}` : "");

function oneLine(text: string, max = 160): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** "iteration 2", or the kind with its iteration: "final_analysis (iteration 3)". */
function kind(i: Pick<LlmItem, "interaction_type" | "iteration">): string {
  if (i.iteration === null) return i.interaction_type;
  return i.interaction_type === "iteration"
    ? `iteration ${i.iteration}`
    : `${i.interaction_type} (iteration ${i.iteration})`;
}

function llmLine(i: LlmItem): string {
  return `LLM ${i.id}  ${kind(i)}  ${i.model_name}  ${took(i.duration_ms)}  ${llmTokens(i)}${failed(i.error_message)}`;
}

function mcpTool(i: Pick<McpItem, "server_name" | "tool_name">): string {
  return i.tool_name ? `${i.server_name}.${i.tool_name}` : i.server_name;
}

function mcpLine(i: McpItem): string {
  return `MCP ${i.id}  ${i.interaction_type}  ${mcpTool(i)}  ${took(i.duration_ms)}${failed(i.error_message)}`;
}

/** The interaction tree: stages → executions → their LLM and MCP interactions in time order. */
export function formatTrace(sessionId: string, trace: TraceListResponse): string {
  const out: string[] = [`Trace of session ${sessionId}`];
  if (trace.stages.length === 0 && trace.session_interactions.length === 0) {
    out.push("  (no interactions yet)");
  }
  for (const stage of trace.stages) {
    out.push(`Stage ${stage.stage_name} (${stage.stage_id})`);
    for (const execution of stage.executions) {
      out.push(`  ${execution.agent_name} (execution ${execution.execution_id})`);
      const items = [
        ...execution.llm_interactions.map((i) => ({ at: i.created_at, line: llmLine(i) })),
        ...execution.mcp_interactions.map((i) => ({ at: i.created_at, line: mcpLine(i) })),
      ].sort((a, b) => a.at.localeCompare(b.at));
      if (items.length === 0) out.push("    (no interactions)");
      for (const item of items) out.push(`    ${item.line}`);
    }
  }
  if (trace.session_interactions.length > 0) {
    out.push("Session interactions");
    for (const i of trace.session_interactions) out.push(`  ${llmLine(i)}`);
  }
  return `${out.join("\n")}\n`;
}

function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

/** Tool calls as `name {arguments}` lines when they have that shape, else their JSON. */
function toolCalls(calls: unknown): string[] {
  if (!Array.isArray(calls)) return [json(calls)];
  return calls.map((call) => {
    const c = call as { name?: unknown; id?: unknown; arguments?: unknown };
    if (typeof c.name !== "string") return json(call);
    const args = typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments ?? {});
    return `→ ${c.name} ${args}${typeof c.id === "string" ? `  (call ${c.id})` : ""}`;
  });
}

/** One LLM interaction in full: what it was, the conversation as sent, and the response. */
export function formatLlmInteraction(i: LLMInteractionDetail): string {
  const out: string[] = [`LLM interaction ${i.id}`];
  out.push(`  Type:       ${kind(i)}`);
  out.push(`  Model:      ${i.model_name}`);
  if (i.provider) out.push(`  Provider:   ${i.provider}`);
  out.push(`  Duration:   ${took(i.duration_ms)}`);
  out.push(`  Tokens:     ${llmTokens(i)}`);
  out.push(`  Stage:      ${i.stage_id ?? "-"}`);
  out.push(`  Execution:  ${i.execution_id ?? "-"}`);
  out.push(`  Created:    ${i.created_at}`);
  if (i.error_message) out.push(`  Error:      ${i.error_message}`);
  out.push(
    "",
    `Conversation (${i.conversation.length} message${i.conversation.length === 1 ? "" : "s"}):`,
  );
  for (const message of i.conversation) {
    const tool = message.tool_name ? ` ${message.tool_name}` : "";
    const call = message.tool_call_id ? ` (call ${message.tool_call_id})` : "";
    out.push(`--- ${message.role}${tool}${call} ---`);
    if (message.content) out.push(message.content);
    if (message.tool_calls !== null && message.tool_calls !== undefined) {
      out.push(...toolCalls(message.tool_calls));
    }
  }
  out.push("", "Response:");
  if (i.thinking_content) out.push("--- thinking ---", i.thinking_content);
  if (i.response_text) out.push("--- text ---", i.response_text);
  if (i.tool_calls !== null && i.tool_calls !== undefined) {
    out.push("--- tool calls ---", ...toolCalls(i.tool_calls));
  }
  if (!i.thinking_content && !i.response_text && (i.tool_calls ?? null) === null) {
    out.push("  (none)");
  }
  return `${out.join("\n")}\n`;
}

/** One MCP interaction in full: the tool, its arguments and its result. */
export function formatMcpInteraction(i: MCPInteractionDetail): string {
  const out: string[] = [`MCP interaction ${i.id}`];
  out.push(`  Type:       ${i.interaction_type}`);
  out.push(`  Tool:       ${mcpTool(i)}`);
  out.push(`  Duration:   ${took(i.duration_ms)}`);
  out.push(`  Stage:      ${i.stage_id ?? "-"}`);
  out.push(`  Execution:  ${i.execution_id ?? "-"}`);
  out.push(`  Created:    ${i.created_at}`);
  if (i.error_message) out.push(`  Error:      ${i.error_message}`);
  out.push("", "Arguments:", i.tool_arguments === null ? "(none)" : json(i.tool_arguments));
  out.push("", "Result:");
  const result = i.tool_result as { content?: unknown; is_error?: unknown } | null;
  if (result === null) out.push("(none)");
  else if (typeof result.content === "string") {
    if (result.is_error === true) out.push("(the tool reported an error)");
    out.push(result.content);
  } else out.push(json(result));
  if (i.available_tools !== null && i.available_tools !== undefined) {
    out.push("", "Available tools:", json(i.available_tools));
  }
  return `${out.join("\n")}\n`;
}
