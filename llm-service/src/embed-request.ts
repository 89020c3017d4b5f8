import { z } from "zod";

/** Providers whose embedding API llm-service speaks; `scripted` needs no network. */
export const EMBEDDING_PROVIDERS = ["google", "openai", "scripted"] as const;
export type EmbeddingProvider = (typeof EMBEDDING_PROVIDERS)[number];

export const MAX_EMBED_TEXTS = 100;
export const MAX_EMBED_DIMENSIONS = 4096;

/** EmbeddingConfig as proto-loader decodes it (keepCase, defaults). */
export const EmbeddingConfigSchema = z
  .object({
    provider: z.enum(EMBEDDING_PROVIDERS, {
      error: (issue) =>
        `unknown provider "${String(issue.input)}": use ${EMBEDDING_PROVIDERS.join(", ")}`,
    }),
    model: z.string().default(""),
    api_key_env: z.string().default(""),
    dimensions: z
      .number()
      .int()
      .min(0, "dimensions must not be negative (0 = the model's default)")
      .max(MAX_EMBED_DIMENSIONS, `dimensions must be at most ${MAX_EMBED_DIMENSIONS}`)
      .default(0),
    base_url: z.string().default(""),
  })
  .refine((config) => config.provider === "scripted" || config.model !== "", {
    message: "model is required for providers google and openai",
    path: ["model"],
  });
export type EmbeddingConfig = z.infer<typeof EmbeddingConfigSchema>;

export const EmbedTaskSchema = z.enum(["document", "query"], {
  error: (issue) =>
    `task must be "document" (stored memories) or "query" (a search), got "${String(issue.input)}"`,
});
export type EmbedTask = z.infer<typeof EmbedTaskSchema>;

export const EmbedRequestSchema = z.object({
  config: EmbeddingConfigSchema,
  texts: z
    .array(z.string().refine((text) => text.trim() !== "", "a text must not be empty"))
    .min(1, "texts must not be empty")
    .max(MAX_EMBED_TEXTS, `at most ${MAX_EMBED_TEXTS} texts per request`),
  task: EmbedTaskSchema,
  session_id: z.string().default(""),
});
export type EmbedRequest = z.infer<typeof EmbedRequestSchema>;

/** What an embedder returns: one vector per text, in order. */
export interface EmbedResult {
  embeddings: number[][];
  /** As the provider reports it (0 when it does not). */
  inputTokens: number;
}
