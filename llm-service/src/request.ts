import { z } from "zod";
import { ConfigError } from "./errors.ts";

/** Messages decoded from GenerateRequest (proto-loader: keepCase, defaults). */
const ToolCallSchema = z.object({
  id: z.string(),
  name: z.string(),
  arguments: z.string(),
  thought_signature: z.string().default(""),
});

/** A signed (or redacted) Anthropic thinking block, replayed exactly as produced. */
export const ReasoningBlockSchema = z.object({
  thinking: z.string().default(""),
  signature: z.string().default(""),
  redacted_data: z.string().default(""),
});
export type ReasoningBlock = z.infer<typeof ReasoningBlockSchema>;

export const ConversationMessageSchema = z.object({
  role: z.enum(["system", "user", "assistant", "tool"]),
  content: z.string(),
  tool_calls: z.array(ToolCallSchema).default([]),
  tool_call_id: z.string().default(""),
  tool_name: z.string().default(""),
  reasoning: z.array(ReasoningBlockSchema).default([]),
  thought_signature: z.string().default(""),
});
export type ConversationMessage = z.infer<typeof ConversationMessageSchema>;

export const ToolDefinitionSchema = z.object({
  name: z.string().min(1),
  description: z.string().default(""),
  parameters_schema: z.string().default(""),
});
export type ToolDefinition = z.infer<typeof ToolDefinitionSchema>;

const NativeToolsSchema = z
  .object({
    google_search: z.boolean().default(false),
    code_execution: z.boolean().default(false),
    url_context: z.boolean().default(false),
  })
  .nullish()
  .transform((v) => v ?? { google_search: false, code_execution: false, url_context: false });

/** proto3 `optional` fields arrive as null when unset (protobufjs oneof members). */
const optionalNumber = z
  .number()
  .nullish()
  .transform((v) => v ?? undefined);

export const LlmConfigSchema = z.object({
  provider: z.string().default(""),
  model: z.string().default(""),
  api_key_env: z.string().default(""),
  base_url: z.string().default(""),
  temperature: optionalNumber,
  max_tokens: optionalNumber,
  native_tools: NativeToolsSchema,
  thinking_budget: optionalNumber,
  thinking_level: z.string().default(""),
  backend: z.string().default(""),
  script: z.string().default(""),
  vertex_project: z.string().default(""),
  vertex_location: z.string().default(""),
  credentials_env: z.string().default(""),
  project_env: z.string().default(""),
  location_env: z.string().default(""),
  /** low | medium | high | xhigh | max; empty: the provider's default (see `reasoningEffort`). */
  reasoning_effort: z.string().default(""),
});
export type LlmConfig = z.infer<typeof LlmConfigSchema>;

export const GenerateRequestSchema = z.object({
  session_id: z.string().default(""),
  execution_id: z.string().default(""),
  agent_name: z.string().default(""),
  messages: z.array(ConversationMessageSchema).min(1, "messages must not be empty"),
  llm_config: LlmConfigSchema,
  tools: z.array(ToolDefinitionSchema).default([]),
  /** Mark the stable prefix for provider prompt caching (see the proto). */
  prompt_cache: z.boolean().default(false),
});
export type GenerateRequest = z.infer<typeof GenerateRequestSchema>;

/** One chunk of the response stream, shaped as the proto oneof. */
export type Chunk =
  | { text: { content: string; thought_signature?: string } }
  | { thinking: { content: string } }
  | {
      tool_call: { call_id: string; name: string; arguments: string; thought_signature?: string };
    }
  | { reasoning: ReasoningBlock }
  | { code_execution: { code: string; result: string } }
  | {
      grounding: {
        web_search_queries: string[];
        sources: { uri: string; title: string }[];
        url_context_urls: string[];
      };
    }
  | {
      usage: {
        input_tokens: number;
        output_tokens: number;
        total_tokens: number;
        thinking_tokens: number;
        /** Prompt tokens read from the provider's cache (input_tokens excludes them). */
        cache_read_tokens?: number;
        /** Prompt tokens written to the provider's cache (input_tokens excludes them). */
        cache_creation_tokens?: number;
      };
    }
  | {
      error: {
        message: string;
        code: string;
        retryable: boolean;
        partial_output?: boolean;
        retries_exhausted?: boolean;
      };
    };

/** Parses JSON-schema tool parameters; an empty string means "no parameters". */
export function parseParametersSchema(tool: ToolDefinition): Record<string, unknown> {
  if (!tool.parameters_schema.trim()) return { type: "object", properties: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(tool.parameters_schema);
  } catch {
    throw new ConfigError(`tool ${tool.name}: parameters_schema is not valid JSON`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(`tool ${tool.name}: parameters_schema must be a JSON object`);
  }
  return parsed as Record<string, unknown>;
}

/** Parses tool-call arguments from the conversation; invalid JSON is passed as a raw string. */
export function parseArguments(raw: string): Record<string, unknown> {
  if (!raw.trim()) return {};
  try {
    const parsed: unknown = JSON.parse(raw);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : { value: parsed };
  } catch {
    return { raw };
  }
}
