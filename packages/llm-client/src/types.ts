import { z } from "zod";

export const ToolCallSchema = z.object({
  id: z.string().min(1),
  name: z.string().min(1),
  /** JSON string of the arguments. */
  arguments: z.string(),
});
export type ToolCall = z.infer<typeof ToolCallSchema>;

/** A signed Anthropic thinking block (or a redacted one), replayed exactly as produced. */
export const ReasoningBlockSchema = z.object({
  thinking: z.string().default(""),
  signature: z.string().optional(),
  redactedData: z.string().optional(),
});
export type ReasoningBlock = z.infer<typeof ReasoningBlockSchema>;

/**
 * Opaque data that keeps the model's reasoning continuous across turns, produced with an
 * assistant message and sent back with it on every later call: Gemini thought signatures
 * (of the text part and of each function call, by call id) and Anthropic signed or
 * redacted thinking blocks. Never shown to users nor put in a prompt as text.
 */
export const ReasoningContinuitySchema = z.object({
  blocks: z.array(ReasoningBlockSchema).optional(),
  textSignature: z.string().optional(),
  /** Gemini thought signature of each tool call, by call id. */
  toolCallSignatures: z.record(z.string(), z.string()).optional(),
  /**
   * The configured provider whose model produced it: only that model can verify it, so it is
   * not sent to another one (after a fallback). Unset on data stored before it was recorded.
   */
  producer: z.string().optional(),
});
export type ReasoningContinuity = z.infer<typeof ReasoningContinuitySchema>;

export const ConversationMessageSchema = z.object({
  role: z.enum(["system", "user", "assistant", "tool"]),
  content: z.string(),
  toolCalls: z.array(ToolCallSchema).optional(),
  toolCallId: z.string().optional(),
  toolName: z.string().optional(),
  /** Assistant messages: the reasoning-continuity data they came with. */
  continuity: ReasoningContinuitySchema.optional(),
});
export type ConversationMessage = z.infer<typeof ConversationMessageSchema>;

export const ToolDefinitionSchema = z.object({
  /** Canonical "server.tool". */
  name: z.string().min(1),
  description: z.string().default(""),
  /** JSON Schema of the parameters (object or JSON string). */
  parameters: z.union([z.record(z.string(), z.unknown()), z.string()]).optional(),
});
export type ToolDefinition = z.input<typeof ToolDefinitionSchema>;

export const LlmBackendSchema = z.enum(["langchain", "google-native", "scripted"]);
export type LlmBackend = z.infer<typeof LlmBackendSchema>;

export const LlmConfigSchema = z.object({
  provider: z.string().min(1),
  model: z.string().default(""),
  /** Name of the env var of llm-service that holds the key (never the key itself). */
  apiKeyEnv: z.string().optional(),
  baseUrl: z.string().optional(),
  /** "langchain" (default), "google-native" or "scripted"; llm-service validates it. */
  backend: z.string().default("langchain"),
  temperature: z.number().optional(),
  maxTokens: z.number().int().positive().optional(),
  thinkingBudget: z.number().int().nonnegative().optional(),
  thinkingLevel: z.enum(["minimal", "low", "medium", "high"]).optional(),
  /** Sent in each provider's own parameter by llm-service (see REASONING_EFFORTS). */
  reasoningEffort: z.enum(["low", "medium", "high", "xhigh", "max"]).optional(),
  nativeTools: z
    .object({
      googleSearch: z.boolean().optional(),
      codeExecution: z.boolean().optional(),
      urlContext: z.boolean().optional(),
    })
    .optional(),
  /** Scripted backend: an inline YAML/JSON script. */
  script: z.string().optional(),
  vertexProject: z.string().optional(),
  vertexLocation: z.string().optional(),
  /** Vertex AI: names of llm-service env vars (service-account JSON or path, project, location). */
  credentialsEnv: z.string().optional(),
  projectEnv: z.string().optional(),
  locationEnv: z.string().optional(),
});
export type LlmConfig = z.input<typeof LlmConfigSchema>;

export const GenerateInputSchema = z.object({
  sessionId: z.string().default(""),
  executionId: z.string().default(""),
  agentName: z.string().default(""),
  messages: z.array(ConversationMessageSchema).min(1),
  tools: z.array(ToolDefinitionSchema).default([]),
  config: LlmConfigSchema,
  /** Mark the stable prefix for provider prompt caching (an investigation-style loop call). */
  promptCache: z.boolean().default(false),
});
export type GenerateInput = z.input<typeof GenerateInputSchema>;

/** One chunk of a streamed answer. An error chunk is the provider's failure, in-band. */
export type LlmChunk =
  | { type: "text"; content: string; thoughtSignature?: string }
  | { type: "thinking"; content: string }
  | {
      type: "tool_call";
      callId: string;
      name: string;
      arguments: string;
      thoughtSignature?: string;
    }
  /** A complete signed thinking block: continuity data, not for display. */
  | { type: "reasoning"; thinking: string; signature?: string; redactedData?: string }
  | { type: "code_execution"; code: string; result: string }
  | {
      type: "grounding";
      webSearchQueries: string[];
      sources: { uri: string; title: string }[];
      urlContextUrls: string[];
    }
  | {
      type: "usage";
      inputTokens: number;
      outputTokens: number;
      totalTokens: number;
      thinkingTokens: number;
      /** Prompt tokens read from the provider's cache; inputTokens excludes them. */
      cacheReadTokens: number;
      /** Prompt tokens written to the provider's cache; inputTokens excludes them. */
      cacheCreationTokens: number;
    }
  | {
      type: "error";
      message: string;
      code: string;
      retryable: boolean;
      /** Part of the answer had been streamed before the provider failed. */
      partialOutput: boolean;
      /** llm-service retried this transient error as often as it may. */
      retriesExhausted: boolean;
    };

export type LlmChunkType = LlmChunk["type"];

/** The wire shape of GenerateResponse as decoded (proto-loader keepCase + oneofs). */
export const GenerateResponseWireSchema = z.object({
  content: z.string().nullish(),
  is_final: z.boolean().default(false),
  text: z.object({ content: z.string(), thought_signature: z.string().default("") }).nullish(),
  thinking: z.object({ content: z.string() }).nullish(),
  tool_call: z
    .object({
      call_id: z.string(),
      name: z.string(),
      arguments: z.string(),
      thought_signature: z.string().default(""),
    })
    .nullish(),
  reasoning: z
    .object({ thinking: z.string(), signature: z.string(), redacted_data: z.string() })
    .nullish(),
  code_execution: z.object({ code: z.string(), result: z.string() }).nullish(),
  grounding: z
    .object({
      web_search_queries: z.array(z.string()),
      sources: z.array(z.object({ uri: z.string(), title: z.string() })),
      url_context_urls: z.array(z.string()),
    })
    .nullish(),
  usage: z
    .object({
      input_tokens: z.number(),
      output_tokens: z.number(),
      total_tokens: z.number(),
      thinking_tokens: z.number(),
      cache_read_tokens: z.number().default(0),
      cache_creation_tokens: z.number().default(0),
    })
    .nullish(),
  error: z
    .object({
      message: z.string(),
      code: z.string(),
      retryable: z.boolean(),
      partial_output: z.boolean().default(false),
      retries_exhausted: z.boolean().default(false),
    })
    .nullish(),
});
