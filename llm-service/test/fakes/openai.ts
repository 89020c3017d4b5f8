import { type Responder, respondJson, type SseEvent } from "./http.ts";

/** OpenAI /v1/chat/completions streaming chunks (stream_options.include_usage). */
function chunk(delta: Record<string, unknown>, finishReason: string | null = null): SseEvent {
  return {
    data: {
      id: "chatcmpl-fake",
      object: "chat.completion.chunk",
      created: 1_700_000_000,
      model: "gpt-fake",
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    },
  };
}

export interface OpenAiStreamSpec {
  text?: string[];
  /** reasoning_content deltas (xAI / DeepSeek / vLLM style, openai-compatible). */
  reasoning?: string[];
  /** Each call's arguments arrive split in two deltas, as OpenAI streams them. */
  toolCalls?: { id: string; name: string; arguments: string }[];
  /**
   * As OpenAI reports it: `prompt` is the WHOLE prompt, including `cached` (read from the
   * prompt cache) and `cacheWrite` (written to it, GPT-5.6+ explicit mode).
   */
  usage?: {
    prompt: number;
    completion: number;
    reasoning?: number;
    cached?: number;
    cacheWrite?: number;
  };
}

export function openAiStream(spec: OpenAiStreamSpec): (SseEvent | string)[] {
  const events: (SseEvent | string)[] = [chunk({ role: "assistant", content: "" })];
  for (const r of spec.reasoning ?? []) events.push(chunk({ reasoning_content: r }));
  for (const t of spec.text ?? []) events.push(chunk({ content: t }));
  (spec.toolCalls ?? []).forEach((call, index) => {
    const half = Math.floor(call.arguments.length / 2);
    events.push(
      chunk({
        tool_calls: [
          {
            index,
            id: call.id,
            type: "function",
            function: { name: call.name, arguments: call.arguments.slice(0, half) },
          },
        ],
      }),
    );
    events.push(
      chunk({ tool_calls: [{ index, function: { arguments: call.arguments.slice(half) } }] }),
    );
  });
  events.push(chunk({}, spec.toolCalls?.length ? "tool_calls" : "stop"));
  if (spec.usage) {
    events.push({
      data: {
        id: "chatcmpl-fake",
        object: "chat.completion.chunk",
        created: 1_700_000_000,
        model: "gpt-fake",
        choices: [],
        usage: {
          prompt_tokens: spec.usage.prompt,
          completion_tokens: spec.usage.completion,
          total_tokens: spec.usage.prompt + spec.usage.completion,
          completion_tokens_details: { reasoning_tokens: spec.usage.reasoning ?? 0 },
          prompt_tokens_details: {
            cached_tokens: spec.usage.cached ?? 0,
            ...(spec.usage.cacheWrite !== undefined && {
              cache_write_tokens: spec.usage.cacheWrite,
            }),
          },
        },
      },
    });
  }
  events.push("[DONE]");
  return events;
}

export const openAiError = (type: string, message: string) => ({
  error: { message, type, param: null, code: type },
});

/** The body of an OpenAI `POST /v1/embeddings` request. */
export interface OpenAiEmbeddingsRequest {
  model: string;
  input: string[];
  encoding_format?: string;
  dimensions?: number;
}

/**
 * Answers `POST /v1/embeddings` with `vectorFor(text, index)` for each input, and the usage
 * OpenAI reports (`promptTokens`, default 1 per input word).
 */
export function openAiEmbedResponder(
  vectorFor: (text: string, index: number) => number[],
  promptTokens?: number,
): Responder {
  return async (res, req) => {
    const body = req.body as OpenAiEmbeddingsRequest;
    const tokens = promptTokens ?? body.input.join(" ").split(/\s+/).length;
    await respondJson(200, {
      object: "list",
      data: body.input.map((text, index) => ({
        object: "embedding",
        index,
        embedding: vectorFor(text, index),
      })),
      model: body.model,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    })(res, req);
  };
}
