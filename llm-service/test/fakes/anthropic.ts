import type { SseEvent } from "./http.ts";

export interface AnthropicStreamSpec {
  thinking?: string[];
  /** Signature of the thinking block (default: a fixed one). */
  signature?: string;
  /** Data of redacted_thinking blocks, after the thinking block. */
  redactedThinking?: string[];
  text?: string[];
  toolUses?: { id: string; name: string; input: string }[];
  /**
   * As the API reports it: `input` is the UNCACHED input; `cacheRead` / `cacheCreation` the
   * prompt tokens read from / written to the prompt cache (reported apart).
   */
  usage?: { input: number; output: number; cacheRead?: number; cacheCreation?: number };
}

/** Anthropic /v1/messages streaming events: message_start … content blocks … message_stop. */
export function anthropicStream(spec: AnthropicStreamSpec): SseEvent[] {
  const ev = (event: string, data: Record<string, unknown>): SseEvent => ({
    event,
    data: { type: event, ...data },
  });
  const events: SseEvent[] = [
    ev("message_start", {
      message: {
        id: "msg_fake",
        type: "message",
        role: "assistant",
        model: "claude-fake",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: spec.usage?.input ?? 0,
          output_tokens: 1,
          cache_read_input_tokens: spec.usage?.cacheRead ?? 0,
          cache_creation_input_tokens: spec.usage?.cacheCreation ?? 0,
        },
      },
    }),
  ];
  let index = 0;
  if (spec.thinking) {
    events.push(
      ev("content_block_start", { index, content_block: { type: "thinking", thinking: "" } }),
    );
    for (const t of spec.thinking) {
      events.push(
        ev("content_block_delta", { index, delta: { type: "thinking_delta", thinking: t } }),
      );
    }
    events.push(
      ev("content_block_delta", {
        index,
        delta: { type: "signature_delta", signature: spec.signature ?? "EqQBCkYIARgCIkDf" },
      }),
    );
    events.push(ev("content_block_stop", { index }));
    index++;
  }
  for (const data of spec.redactedThinking ?? []) {
    events.push(
      ev("content_block_start", { index, content_block: { type: "redacted_thinking", data } }),
    );
    events.push(ev("content_block_stop", { index }));
    index++;
  }
  if (spec.text) {
    events.push(ev("content_block_start", { index, content_block: { type: "text", text: "" } }));
    for (const t of spec.text)
      events.push(ev("content_block_delta", { index, delta: { type: "text_delta", text: t } }));
    events.push(ev("content_block_stop", { index }));
    index++;
  }
  for (const use of spec.toolUses ?? []) {
    events.push(
      ev("content_block_start", {
        index,
        content_block: { type: "tool_use", id: use.id, name: use.name, input: {} },
      }),
    );
    const half = Math.floor(use.input.length / 2);
    for (const part of [use.input.slice(0, half), use.input.slice(half)]) {
      events.push(
        ev("content_block_delta", {
          index,
          delta: { type: "input_json_delta", partial_json: part },
        }),
      );
    }
    events.push(ev("content_block_stop", { index }));
    index++;
  }
  events.push(
    ev("message_delta", {
      delta: { stop_reason: spec.toolUses?.length ? "tool_use" : "end_turn", stop_sequence: null },
      usage: { output_tokens: spec.usage?.output ?? 0 },
    }),
  );
  events.push(ev("message_stop", {}));
  return events;
}

export const anthropicError = (type: string, message: string) => ({
  type: "error",
  error: { type, message },
});
