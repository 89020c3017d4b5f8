export {
  type CostEstimate,
  type CostEstimationSettings,
  type CostEstimator,
  type CostUsage,
  createCostEstimator,
  type RatePerMillion,
  roundUsd,
} from "./estimate.ts";
export { findModelPrice, type PriceMatch, stripProviderPrefix } from "./match.ts";
export { bundledPriceTable, type ModelPrice, type PriceTable, PriceTableSchema } from "./table.ts";
