import { forcedNote } from "./stage-context.ts";

/** The fields of a timeline event the formatters read. */
export interface FormattableEvent {
  eventType: string;
  status: string;
  content: string;
  metadata: unknown;
}

interface ToolCallMetadata {
  server_name?: string;
  tool_name?: string;
  arguments?: unknown;
  is_error?: boolean;
}

function toolMeta(metadata: unknown): ToolCallMetadata {
  return metadata && typeof metadata === "object" ? (metadata as ToolCallMetadata) : {};
}

/** `server.tool(args)` from an llm_tool_call event's metadata. */
export function formatToolCallHeader(metadata: unknown): string {
  const meta = toolMeta(metadata);
  const name =
    meta.server_name && meta.tool_name
      ? `${meta.server_name}.${meta.tool_name}`
      : (meta.tool_name ?? "unknown tool");
  const args =
    meta.arguments === undefined
      ? ""
      : typeof meta.arguments === "string"
        ? meta.arguments
        : JSON.stringify(meta.arguments);
  return `${name}(${args})`;
}

const LABELS: Record<string, string> = {
  llm_thinking: "Thinking",
  llm_response: "Response",
  final_analysis: "Final analysis",
  user_question: "User question",
  executive_summary: "Executive summary",
  code_execution: "Code execution",
  google_search_result: "Search results",
  url_context_result: "URL context",
  error: "Error",
};

/**
 * Renders timeline events as readable text for another LLM. A tool call followed directly by
 * its summary is shown once: the call's name and arguments with the summary in place of the
 * raw result (the summary event itself is then skipped).
 */
export function formatTimelineEvents(events: readonly FormattableEvent[]): string {
  const parts: string[] = [];
  for (let i = 0; i < events.length; i++) {
    const event = events[i] as FormattableEvent;
    if (event.eventType === "llm_tool_call") {
      const next = events[i + 1];
      const header = `**Tool call:** ${formatToolCallHeader(event.metadata)}`;
      if (next?.eventType === "mcp_tool_summary") {
        parts.push(`${header}\n**Result (summarized):**\n${next.content.trim()}`);
        i++;
      } else {
        const failed = toolMeta(event.metadata).is_error ? " (error)" : "";
        parts.push(`${header}\n**Result${failed}:**\n${event.content.trim()}`);
      }
      continue;
    }
    if (event.eventType === "mcp_tool_summary") {
      parts.push(`**Tool result summary:**\n${event.content.trim()}`);
      continue;
    }
    const label = LABELS[event.eventType] ?? event.eventType;
    const suffix =
      event.status === "completed" || event.status === "streaming"
        ? event.eventType === "final_analysis"
          ? forcedNote(forcedReasonOf(event.metadata))
          : ""
        : ` (${event.status})`;
    parts.push(`**${label}${suffix}:**\n${event.content.trim()}`);
  }
  return parts.join("\n\n");
}

/** A forced conclusion's reason from a final_analysis event's metadata (else null). */
function forcedReasonOf(metadata: unknown): string | null {
  if (!metadata || typeof metadata !== "object") return null;
  const meta = metadata as { forced_conclusion?: unknown; reason?: unknown };
  if (meta.forced_conclusion !== true) return null;
  // Events from before reasons were recorded: only the iteration limit forced a conclusion.
  return typeof meta.reason === "string" ? meta.reason : "max_iterations";
}
