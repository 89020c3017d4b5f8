import { z } from "zod";

export const ToolCallSchema = z.object({
  id: z.string().min(1),
  name: z.string().min(1),
  /** JSON string of the arguments. */
  arguments: z.string(),
});
export type ToolCall = z.infer<typeof ToolCallSchema>;

export const ConversationMessageSchema = z.object({
  role: z.enum(["system", "user", "assistant", "tool"]),
  content: z.string(),
  toolCalls: z.array(ToolCallSchema).optional(),
  toolCallId: z.string().optional(),
  toolName: z.string().optional(),
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
});
export type GenerateInput = z.input<typeof GenerateInputSchema>;

/** One chunk of a streamed answer. An error chunk is the provider's failure, in-band. */
export type LlmChunk =
  | { type: "text"; content: string }
  | { type: "thinking"; content: string }
  | { type: "tool_call"; callId: string; name: string; arguments: string }
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
    }
  | { type: "error"; message: string; code: string; retryable: boolean };

export type LlmChunkType = LlmChunk["type"];

/** The wire shape of GenerateResponse as decoded (proto-loader keepCase + oneofs). */
export const GenerateResponseWireSchema = z.object({
  content: z.string().nullish(),
  is_final: z.boolean().default(false),
  text: z.object({ content: z.string() }).nullish(),
  thinking: z.object({ content: z.string() }).nullish(),
  tool_call: z.object({ call_id: z.string(), name: z.string(), arguments: z.string() }).nullish(),
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
    })
    .nullish(),
  error: z.object({ message: z.string(), code: z.string(), retryable: z.boolean() }).nullish(),
});
