/**
 * Finding a model's entry in the price table, as the Go TARSy's `pkg/cost/match.go` does: the
 * exact name first, then conservative rules — a key ending in `/<name>`, a key whose provider
 * prefix stripped is the name, then the same with the prefix stripped from the name. Several
 * candidates with different prices match nothing (unpriced rather than a guess).
 */
import type { ModelPrice } from "./table.ts";

/** Routing prefixes a model name may carry (LiteLLM style), stripped as a last resort. */
const PROVIDER_PREFIXES = [
  "gemini/",
  "openai/",
  "anthropic/",
  "vertex_ai/",
  "bedrock/",
  "azure/",
  "openrouter/",
  "xai/",
] as const;

export interface PriceMatch {
  /** The table key that matched. */
  readonly key: string;
  readonly price: ModelPrice;
}

export function stripProviderPrefix(name: string): string {
  for (const prefix of PROVIDER_PREFIXES) {
    if (name.startsWith(prefix)) return name.slice(prefix.length);
  }
  return name;
}

export function findModelPrice(
  models: Readonly<Record<string, ModelPrice>>,
  modelName: string,
): PriceMatch | null {
  if (!modelName) return null;
  const exact = models[modelName];
  if (exact) return { key: modelName, price: exact };

  const entries = Object.entries(models);
  let candidates = entries.filter(([key]) => key.endsWith(`/${modelName}`));
  if (candidates.length === 0) {
    candidates = entries.filter(([key]) => stripProviderPrefix(key) === modelName);
  }
  if (candidates.length === 0) {
    const stripped = stripProviderPrefix(modelName);
    if (stripped !== modelName) {
      const hit = models[stripped];
      if (hit) return { key: stripped, price: hit };
      candidates = entries.filter(
        ([key]) => key.endsWith(`/${stripped}`) || stripProviderPrefix(key) === stripped,
      );
    }
  }

  const [first, ...rest] = candidates;
  if (!first) return null;
  if (rest.some(([, price]) => !samePrice(first[1], price))) return null;
  return { key: first[0], price: first[1] };
}

function samePrice(a: ModelPrice, b: ModelPrice): boolean {
  return (
    a.input_per_million === b.input_per_million &&
    a.output_per_million === b.output_per_million &&
    a.reasoning_per_million === b.reasoning_per_million &&
    a.long_context?.threshold_tokens === b.long_context?.threshold_tokens &&
    a.long_context?.input_per_million === b.long_context?.input_per_million &&
    a.long_context?.output_per_million === b.long_context?.output_per_million
  );
}
