import { z } from "zod";
import { LlmInvalidArgumentError, LlmInvalidResponseError } from "./errors.ts";

export const EmbeddingConfigSchema = z.object({
  /** "google", "openai" or "scripted" (deterministic, no network); llm-service validates it. */
  provider: z.string().min(1),
  model: z.string().default(""),
  /** Name of the env var of llm-service that holds the key (never the key itself). */
  apiKeyEnv: z.string().optional(),
  /** Output dimensionality; 0 or unset = the model's default (scripted: 768). */
  dimensions: z.number().int().min(0).max(4096).optional(),
  baseUrl: z.string().optional(),
});
export type EmbeddingConfig = z.input<typeof EmbeddingConfigSchema>;

/** "document" for what is stored (memories), "query" for what searches them. */
export const EmbedTaskSchema = z.enum(["document", "query"]);
export type EmbedTask = z.infer<typeof EmbedTaskSchema>;

export const EmbedInputSchema = z.object({
  config: EmbeddingConfigSchema,
  texts: z.array(z.string().min(1)).min(1).max(100),
  task: EmbedTaskSchema,
  /** Logging only. */
  sessionId: z.string().default(""),
});
export type EmbedInput = z.input<typeof EmbedInputSchema>;

export interface EmbedOutput {
  /** One vector per text, in the order of the texts. */
  embeddings: number[][];
  /** As the provider reports it (0 when it does not). */
  inputTokens: number;
}

export interface EmbedOptions {
  /** Aborting cancels the gRPC call; llm-service aborts the provider request at once. */
  signal?: AbortSignal;
  /** Time allowed for the call, in milliseconds from now (retries included). */
  deadlineMs?: number;
}

/** The wire shape of EmbedResponse as decoded (proto-loader keepCase + defaults). */
export const EmbedResponseWireSchema = z.object({
  embeddings: z.array(z.object({ values: z.array(z.number()) })),
  input_tokens: z.number().int().nonnegative(),
});

export function embedToWire(input: EmbedInput): Record<string, unknown> {
  const parsed = EmbedInputSchema.safeParse(input);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    throw new LlmInvalidArgumentError(`invalid EmbedInput: ${issues.join("; ")}`);
  }
  const { config, texts, task, sessionId } = parsed.data;
  return {
    config: {
      provider: config.provider,
      model: config.model,
      api_key_env: config.apiKeyEnv ?? "",
      dimensions: config.dimensions ?? 0,
      base_url: config.baseUrl ?? "",
    },
    texts,
    task,
    session_id: sessionId,
  };
}

export function embedFromWire(raw: unknown, texts: number): EmbedOutput {
  const parsed = EmbedResponseWireSchema.safeParse(raw);
  if (!parsed.success)
    throw new LlmInvalidResponseError(`invalid EmbedResponse: ${parsed.error.message}`);
  const { embeddings, input_tokens } = parsed.data;
  if (embeddings.length !== texts) {
    throw new LlmInvalidResponseError(
      `invalid EmbedResponse: ${embeddings.length} embeddings for ${texts} texts`,
    );
  }
  return { embeddings: embeddings.map((e) => e.values), inputTokens: input_tokens };
}
