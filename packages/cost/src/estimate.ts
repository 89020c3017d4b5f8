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

/** Token counts as the LLM reported them. */
export interface CostUsage {
  readonly input_tokens: number;
  readonly output_tokens: number;
  readonly thinking_tokens?: number | null;
  readonly total_tokens?: number | null;
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
}

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
      const input = usage?.input_tokens ?? 0;
      const resolved = resolveRates(settings, table, modelName, input, time);
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
  inputTokens: number,
  time: number,
): { rates: Rates; source: string } | null {
  const promotion = settings.promotions.find(
    (p) => p.model === modelName && (p.start_ms === null || p.start_ms <= time) && time < p.end_ms,
  );
  if (promotion) return { rates: flat(promotion), source: `promotion:${promotion.id}` };
  const configured = settings.model_rates[modelName];
  if (configured) return { rates: flat(configured), source: "model_rates" };
  const match = findModelPrice(table.models, modelName);
  if (match)
    return { rates: tableRates(match.price, inputTokens), source: `catalog:${table.version}` };
  return null;
}

/** A configured rate: thinking is billed as output. */
function flat(rate: RatePerMillion): Rates {
  return {
    input: rate.input_per_million,
    output: rate.output_per_million,
    reasoning: rate.output_per_million,
  };
}

function tableRates(price: ModelPrice, inputTokens: number): Rates {
  const long = price.long_context;
  const tier = long && inputTokens >= long.threshold_tokens ? long : price;
  return {
    input: tier.input_per_million,
    output: tier.output_per_million,
    reasoning: price.reasoning_per_million ?? tier.output_per_million,
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
  const separate =
    usage.total_tokens === null ||
    usage.total_tokens === undefined ||
    usage.total_tokens >= usage.input_tokens + usage.output_tokens + thinking;
  const output = separate ? usage.output_tokens : Math.max(0, usage.output_tokens - thinking);
  const perMillion =
    usage.input_tokens * rates.input + output * rates.output + thinking * rates.reasoning;
  return roundUsd(perMillion / 1_000_000);
}

/** Sums of floating-point dollars keep 10 decimals (far below a cent, free of float noise). */
export function roundUsd(usd: number): number {
  return Math.round(usd * 1e10) / 1e10;
}
