/**
 * The estimate of one LLM call, made once when its interaction is written. Which rate applies:
 * a promotion for the model active at the call's time (window [start, end)), else the config's
 * `model_rates` for the exact model name, else the bundled table (matched as `match.ts` says).
 */
import type { CostStatus } from "@tarsy/contracts";
import { findModelPrice } from "./match.ts";
import { bundledPriceTable, type ModelPrice, type PriceTable } from "./table.ts";

export interface RatePerMillion {
  readonly input_per_million: number;
  readonly output_per_million: number;
}

/** `system.cost_estimation` of tarsy.yaml (structurally; this package does not load config). */
export interface CostEstimationSettings {
  readonly enabled: boolean;
  readonly model_rates: Readonly<Record<string, RatePerMillion>>;
  readonly promotions: readonly (RatePerMillion & {
    readonly id: string;
    readonly model: string;
    /** Epoch ms; null: active since forever. */
    readonly start_ms: number | null;
    readonly end_ms: number;
  })[];
}

/**
 * Token counts as llm-service reports them: `input_tokens` is the UNCACHED input; prompt-cache
 * reads and writes come apart (the whole prompt is input + cache read + cache creation).
 */
export interface CostUsage {
  readonly input_tokens: number;
  readonly output_tokens: number;
  readonly thinking_tokens?: number | null;
  readonly total_tokens?: number | null;
  readonly cache_read_tokens?: number | null;
  readonly cache_creation_tokens?: number | null;
}

export interface CostEstimate {
  /** USD; null unless priced. */
  readonly estimatedCostUsd: number | null;
  readonly costStatus: CostStatus;
  /** `promotion:<id>`, `model_rates` or `catalog:<table version>`; null unless priced. */
  readonly costRateSource: string | null;
}

export interface CostEstimator {
  estimate(modelName: string, usage: CostUsage | null | undefined, at: Date | number): CostEstimate;
}

interface Rates {
  readonly input: number;
  readonly output: number;
  readonly reasoning: number;
  readonly cacheRead: number;
  readonly cacheCreation: number;
}

/** ADR-0026: a cache read costs 0.1 × input; a write 2 × (Claude, 1-hour) or 1.25 × input. */
const CACHE_READ_FACTOR = 0.1;
const cacheCreationFactor = (modelName: string) =>
  modelName.toLowerCase().includes("claude") ? 2 : 1.25;

/** The whole prompt: what long-context tiers are chosen by. */
const promptTokens = (usage: CostUsage | null | undefined) =>
  (usage?.input_tokens ?? 0) +
  (usage?.cache_read_tokens ?? 0) +
  (usage?.cache_creation_tokens ?? 0);

const DISABLED: CostEstimate = {
  estimatedCostUsd: null,
  costStatus: "disabled",
  costRateSource: null,
};
const UNPRICED: CostEstimate = {
  estimatedCostUsd: null,
  costStatus: "unpriced",
  costRateSource: null,
};

export function createCostEstimator(
  settings: CostEstimationSettings,
  table: PriceTable = bundledPriceTable(),
): CostEstimator {
  return {
    estimate(modelName, usage, at) {
      if (!settings.enabled) return DISABLED;
      const time = typeof at === "number" ? at : at.getTime();
      const resolved = resolveRates(settings, table, modelName, promptTokens(usage), time);
      if (!resolved) return UNPRICED;
      return {
        estimatedCostUsd: priceTokens(resolved.rates, usage),
        costStatus: "priced",
        costRateSource: resolved.source,
      };
    },
  };
}

function resolveRates(
  settings: CostEstimationSettings,
  table: PriceTable,
  modelName: string,
  promptSize: number,
  time: number,
): { rates: Rates; source: string } | null {
  const promotion = settings.promotions.find(
    (p) => p.model === modelName && (p.start_ms === null || p.start_ms <= time) && time < p.end_ms,
  );
  if (promotion) {
    return { rates: flat(promotion, modelName), source: `promotion:${promotion.id}` };
  }
  const configured = settings.model_rates[modelName];
  if (configured) return { rates: flat(configured, modelName), source: "model_rates" };
  const match = findModelPrice(table.models, modelName);
  if (match) {
    return {
      rates: tableRates(match.price, modelName, promptSize),
      source: `catalog:${table.version}`,
    };
  }
  return null;
}

/** A configured rate: thinking is billed as output; cache rates derive from its input rate. */
function flat(rate: RatePerMillion, modelName: string): Rates {
  return {
    input: rate.input_per_million,
    output: rate.output_per_million,
    reasoning: rate.output_per_million,
    cacheRead: rate.input_per_million * CACHE_READ_FACTOR,
    cacheCreation: rate.input_per_million * cacheCreationFactor(modelName),
  };
}

function tableRates(price: ModelPrice, modelName: string, promptSize: number): Rates {
  const long = price.long_context;
  const isLong = long !== undefined && promptSize >= long.threshold_tokens;
  const tier = isLong ? long : price;
  const claude = modelName.toLowerCase().includes("claude");
  // Claude writes are 1-hour writes: never priced at the 5-minute rate.
  const creation = claude ? price.cache_creation_1h_per_million : price.cache_creation_per_million;
  return {
    input: tier.input_per_million,
    output: tier.output_per_million,
    reasoning: price.reasoning_per_million ?? tier.output_per_million,
    cacheRead: tier.cache_read_per_million ?? tier.input_per_million * CACHE_READ_FACTOR,
    cacheCreation:
      (isLong ? undefined : creation) ?? tier.input_per_million * cacheCreationFactor(modelName),
  };
}

/**
 * USD for the call. Providers report thinking either apart from output (Gemini: total = input +
 * output + thinking) or inside it (OpenAI, the AI SDK: total = input + output); in the latter
 * case the thinking part is taken out of output so that no token is billed twice.
 */
export function priceTokens(rates: Rates, usage: CostUsage | null | undefined): number {
  if (!usage) return 0;
  const thinking = usage.thinking_tokens ?? 0;
  const cacheRead = usage.cache_read_tokens ?? 0;
  const cacheCreation = usage.cache_creation_tokens ?? 0;
  const separate =
    usage.total_tokens === null ||
    usage.total_tokens === undefined ||
    usage.total_tokens >= promptTokens(usage) + usage.output_tokens + thinking;
  const output = separate ? usage.output_tokens : Math.max(0, usage.output_tokens - thinking);
  const perMillion =
    usage.input_tokens * rates.input +
    cacheRead * rates.cacheRead +
    cacheCreation * rates.cacheCreation +
    output * rates.output +
    thinking * rates.reasoning;
  return roundUsd(perMillion / 1_000_000);
}

/** Sums of floating-point dollars keep 10 decimals (far below a cent, free of float noise). */
export function roundUsd(usd: number): number {
  return Math.round(usd * 1e10) / 1e10;
}
