import { z } from "zod";

/** Every payload carries a version so consumers can evolve safely. */
export const V1 = z.literal(1);

export const IdSchema = z.string().min(1).max(128);
export const TimestampSchema = z.iso.datetime({ offset: true });

export const TokenUsageSchema = z.object({
  input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nonnegative(),
  total_tokens: z.number().int().nonnegative(),
  thinking_tokens: z.number().int().nonnegative().optional(),
  /** Prompt-cache reads and writes; input_tokens is the uncached input (ADR-0026). */
  cache_read_tokens: z.number().int().nonnegative().optional(),
  cache_creation_tokens: z.number().int().nonnegative().optional(),
});
export type TokenUsage = z.infer<typeof TokenUsageSchema>;

export const JsonObjectSchema = z.record(z.string(), z.unknown());
