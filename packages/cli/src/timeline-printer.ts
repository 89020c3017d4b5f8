import {
  ForcedConclusionReasonSchema,
  forcedConclusionLabel,
  type PersistentEvent,
  type TimelineEventType,
  type WsChunkFrame,
} from "@tarsy/contracts";

const LABELS: Record<TimelineEventType, string> = {
  llm_thinking: "thinking",
  llm_response: "response",
  llm_tool_call: "tool call",
  mcp_tool_summary: "tool summary",
  error: "error",
  user_question: "question",
  executive_summary: "EXECUTIVE SUMMARY",
  final_analysis: "FINAL ANALYSIS",
  code_execution: "code execution",
  google_search_result: "search result",
  url_context_result: "url context",
  provider_fallback: "provider fallback",
  skill_loaded: "skill loaded",
  memory_injected: "memories injected",
  task_assigned: "task assigned",
  sub_agent_result: "sub-agent result",
  execution_resumed: "resumed",
};

interface StreamState {
  label: string;
  /** Text printed so far (initial content and chunks). */
  text: string;
  /** Whether the label was printed (it waits for the first text). */
  started: boolean;
}

/** Chunks can overtake their event's creation (core NATS vs the stream); kept this long. */
const EARLY_CHUNK_EVENTS = 64;

/**
 * Renders a session's events as terminal lines. Streaming timeline events are printed as
 * their chunks arrive; when the event completes, only the part not streamed yet is added.
 */
export class TimelinePrinter {
  private readonly streams = new Map<string, StreamState>();
  /** Deltas of events whose creation has not arrived yet. */
  private readonly early = new Map<string, string>();
  /** The event whose streamed line is open (no newline yet). */
  private open: string | undefined;

  constructor(private readonly write: (text: string) => void) {}

  event(event: PersistentEvent): void {
    switch (event.type) {
      case "session.status":
        this.line(
          `● session ${event.status}${event.current_stage ? ` (stage ${event.current_stage})` : ""}${event.error ? `: ${event.error}` : ""}`,
        );
        return;
      case "session.deleted":
        this.line("● session deleted");
        return;
      case "stage.status":
        this.line(
          `▶ stage ${event.stage_index} ${event.stage_name}: ${event.status}${event.error ? ` (${event.error})` : ""}`,
        );
        return;
      case "chat.created":
        this.line(`● chat started by ${event.created_by}`);
        return;
      case "chat.user_message":
        this.line(`● ${event.author} asks: ${event.content}`);
        return;
      case "review.status":
        this.line(
          `● review: ${event.review_status ?? "none"}${event.assignee ? ` (${event.assignee})` : ""}${event.quality_rating ? `, rated ${event.quality_rating}` : ""} by ${event.actor}`,
        );
        return;
      case "session.score_updated":
        this.line(
          `● score: ${event.scoring_status}${event.total_score === null ? "" : ` ${event.total_score}/100`}`,
        );
        return;
      case "action.status": {
        const a = event.action;
        const args = JSON.stringify(a.arguments);
        if (a.status === "pending") {
          this.line(
            `⏸ action ${a.tool_name} ${args} by ${a.agent_name} waits for approval: tarsy action approve|deny ${a.id}`,
          );
        } else if (a.call_status === "not_started") {
          this.line(
            `● action ${a.tool_name}: ${a.status}${a.decided_by ? ` by ${a.decided_by}` : ""}${a.comment ? ` (${a.comment})` : ""}`,
          );
        } else {
          this.line(`● action ${a.tool_name}: call ${a.call_status.replace("_", " ")}`);
        }
        return;
      }
      case "timeline_event.created": {
        const label = labelOf(event.event_type, event.metadata);
        if (event.status === "streaming") {
          const stream = { label, text: "", started: false };
          this.streams.set(event.event_id, stream);
          const early = this.early.get(event.event_id) ?? "";
          this.early.delete(event.event_id);
          this.continueStream(event.event_id, stream, event.content + early);
        } else {
          this.block(label, event.content, event.status);
        }
        return;
      }
      case "timeline_event.completed": {
        this.early.delete(event.event_id);
        const stream = this.streams.get(event.event_id);
        const label = labelOf(event.event_type, event.metadata);
        const suffix = event.status === "completed" ? "" : ` [${event.status}]`;
        if (!stream) {
          this.block(label, event.content, event.status);
          return;
        }
        this.streams.delete(event.event_id);
        if (stream.text.length > 0 && event.content.startsWith(stream.text)) {
          this.continueStream(event.event_id, stream, event.content.slice(stream.text.length));
          this.closeLine();
          if (suffix) this.line(`  (${label}${suffix})`);
        } else if (stream.text.length === 0) {
          if (this.open === event.event_id) this.closeLine();
          this.block(label, event.content, event.status);
        } else {
          this.closeLine();
          this.block(`${label} (final)`, event.content, event.status);
        }
        return;
      }
      default: {
        const unreachable: never = event;
        throw new Error(`unhandled event ${JSON.stringify(unreachable)}`);
      }
    }
  }

  chunk(frame: WsChunkFrame): void {
    const { event_id, delta, reset } = frame.payload;
    const stream = this.streams.get(event_id);
    if (stream) {
      if (reset) {
        // The LLM call was cut and is retried: what was printed of it is void.
        if (stream.started)
          this.line(`  (${stream.label}: connection lost; retrying, the text above is void)`);
        stream.text = "";
        stream.started = false;
      }
      this.continueStream(event_id, stream, delta);
      return;
    }
    this.early.set(event_id, (reset ? "" : (this.early.get(event_id) ?? "")) + delta);
    if (this.early.size > EARLY_CHUNK_EVENTS) {
      const oldest = this.early.keys().next().value;
      if (oldest !== undefined) this.early.delete(oldest);
    }
  }

  /** Ends an open streamed line, e.g. before exiting. */
  finish(): void {
    this.closeLine();
  }

  private continueStream(eventId: string, stream: StreamState, delta: string): void {
    if (!delta) return;
    if (this.open !== eventId) {
      this.closeLine();
      this.write(`  ${stream.label}${stream.started ? " (cont.)" : ""}: `);
      stream.started = true;
      this.open = eventId;
    }
    stream.text += delta;
    this.write(delta.replaceAll("\n", "\n    "));
  }

  private block(label: string, content: string, status: string): void {
    const suffix = status === "completed" ? "" : ` [${status}]`;
    const body = content.includes("\n") ? `\n${indent(content, "    ")}` : ` ${content}`;
    this.line(`  ${label}${suffix}:${body}`);
  }

  private line(text: string): void {
    this.closeLine();
    this.write(`${text}\n`);
  }

  private closeLine(): void {
    if (this.open === undefined) return;
    this.open = undefined;
    this.write("\n");
  }
}

/** The event's label; a tool call or summary names the tool and its arguments. */
function labelOf(type: TimelineEventType, metadata: Record<string, unknown> | null): string {
  const label = LABELS[type];
  if (type === "final_analysis" && metadata?.forced_conclusion === true) {
    const reason = ForcedConclusionReasonSchema.safeParse(metadata.reason);
    return `${label} (forced conclusion: ${forcedConclusionLabel(reason.data ?? "max_iterations")})`;
  }
  if (type !== "llm_tool_call" && type !== "mcp_tool_summary") return label;
  const tool = [metadata?.server_name, metadata?.tool_name].filter((p) => typeof p === "string");
  if (tool.length === 0) return label;
  const args = metadata?.arguments;
  const shown =
    args === undefined || args === null
      ? ""
      : `(${typeof args === "string" ? args : JSON.stringify(args)})`;
  return `${label} ${tool.join(".")}${shown}${metadata?.is_error === true ? " failed" : ""}`;
}

function indent(text: string, prefix: string): string {
  return text
    .split("\n")
    .map((line) => (line ? `${prefix}${line}` : line))
    .join("\n");
}
