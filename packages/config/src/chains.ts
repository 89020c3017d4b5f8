import { ChainNotFoundError, UnknownReferenceError } from "./errors.ts";
import type { ChainConfig, TarsyConfig } from "./types.ts";

export function getChain(config: TarsyConfig, chainId: string): ChainConfig {
  const chain = config.chains.get(chainId);
  if (!chain) throw new UnknownReferenceError("chain", [chainId], "chain lookup");
  return chain;
}

export function findChainForAlertType(
  config: TarsyConfig,
  alertType: string,
): ChainConfig | undefined {
  for (const chain of config.chains.values()) {
    if (chain.alert_types.includes(alertType)) return chain;
  }
  return undefined;
}

/**
 * The chain that handles an alert type; an alert without a type uses `defaults.alert_type`.
 * An alert type no chain claims is an error (it is not silently sent to the default chain).
 */
export function resolveChainForAlertType(
  config: TarsyConfig,
  alertType?: string | null,
): ChainConfig {
  const effective = alertType?.trim() ? alertType : config.defaults.alert_type;
  const chain = findChainForAlertType(config, effective);
  if (!chain) throw new ChainNotFoundError(effective);
  return chain;
}

/** Every alert type some chain handles, sorted (for the dashboard's dropdown and API checks). */
export function listAlertTypes(config: TarsyConfig): string[] {
  return [...config.chains.values()].flatMap((chain) => chain.alert_types).sort();
}
