/** The bundled price table (`price-table.json`): list prices per million tokens, versioned. */
import { z } from "zod";
import bundled from "./price-table.json" with { type: "json" };

const PerMillion = z.number().nonnegative();

export const ModelPriceSchema = z.object({
  input_per_million: PerMillion,
  output_per_million: PerMillion,
  /** Thinking tokens, where the vendor bills them apart from output; else the output rate. */
  reasoning_per_million: PerMillion.optional(),
  /** Prompt-cache reads (default: 0.1 × input). */
  cache_read_per_million: PerMillion.optional(),
  /** Prompt-cache writes: Anthropic 5-minute writes, OpenAI explicit writes (default 1.25 × input). */
  cache_creation_per_million: PerMillion.optional(),
  /** Anthropic 1-hour writes, what TARSy's breakpoints ask for (default 2 × input). */
  cache_creation_1h_per_million: PerMillion.optional(),
  /** Rates for a call whose prompt reaches `threshold_tokens` (long-context pricing). */
  long_context: z
    .object({
      threshold_tokens: z.number().int().positive(),
      input_per_million: PerMillion,
      output_per_million: PerMillion,
      cache_read_per_million: PerMillion.optional(),
    })
    .optional(),
});
export type ModelPrice = z.infer<typeof ModelPriceSchema>;

export const PriceTableSchema = z.object({
  version: z.string().min(1),
  /** The date the prices were read from the vendors' pages (YYYY-MM-DD). */
  as_of: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  models: z.record(z.string().min(1), ModelPriceSchema),
});
export type PriceTable = z.infer<typeof PriceTableSchema>;

let cached: PriceTable | undefined;

/** The table shipped with this package (parsed once; no network). */
export function bundledPriceTable(): PriceTable {
  cached ??= PriceTableSchema.parse(bundled);
  return cached;
}
