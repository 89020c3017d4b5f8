import { UnknownReferenceError } from "./errors.ts";
import type {
  ChainConfig,
  FallbackProviderEntry,
  FallbackSelector,
  LlmBackend,
  LlmProviderConfig,
  NativeToolsConfig,
  TarsyConfig,
} from "./types.ts";

/** A fallback entry with its provider looked up. */
export interface ResolvedFallbackEntry {
  provider_name: string;
  provider: LlmProviderConfig;
  backend: LlmBackend;
  /** google-native entries: the provider's native tools with the agent's own on top. */
  native_tools?: NativeToolsConfig;
}

/** A level of the hierarchy as the resolver sees it (`undefined`: the level is absent). */
export type FallbackLevel = FallbackSelector | undefined;

/**
 * One level's walk: its `fallback_list` expanded from the catalog, else its deprecated
 * `fallback_providers` (also `[]`), else undefined (the level inherits). A named list is a
 * walk even when empty.
 */
export function expandFallbackLevel(
  config: TarsyConfig,
  level: FallbackLevel,
  context: string,
): FallbackProviderEntry[] | undefined {
  if (!level) return undefined;
  if (level.fallback_list) {
    const list = config.fallbackLists.get(level.fallback_list);
    if (!list) throw new UnknownReferenceError("fallback_list", [level.fallback_list], context);
    return list;
  }
  return level.fallback_providers;
}

/**
 * The fallback walk of an execution: the most specific level (first) that chooses one wins,
 * after each level's named list is expanded; `[]` (or an empty named list) turns fallback off.
 */
export function resolveFallbackProviders(
  config: TarsyConfig,
  levelsMostSpecificFirst: readonly FallbackLevel[],
  context: string,
  agentNativeTools?: NativeToolsConfig,
): ResolvedFallbackEntry[] {
  let list: FallbackProviderEntry[] | undefined;
  for (const level of levelsMostSpecificFirst) {
    list = expandFallbackLevel(config, level, context);
    if (list !== undefined) break;
  }
  return resolveEntries(config, list ?? [], context, agentNativeTools);
}

/** Looks up each entry's provider (an unknown one is an error) and its native tools. */
export function resolveEntries(
  config: TarsyConfig,
  entries: readonly FallbackProviderEntry[],
  context: string,
  agentNativeTools?: NativeToolsConfig,
): ResolvedFallbackEntry[] {
  return entries.map((entry) => {
    const provider = config.llmProviders.get(entry.provider);
    if (!provider) {
      throw new UnknownReferenceError("llm_provider", [entry.provider], `${context} fallback`);
    }
    const nativeTools =
      entry.backend === "google-native" && (provider.native_tools || agentNativeTools)
        ? { ...provider.native_tools, ...agentNativeTools }
        : undefined;
    return {
      provider_name: entry.provider,
      provider,
      backend: entry.backend,
      ...(nativeTools && { native_tools: nativeTools }),
    };
  });
}

/**
 * The walk of a job that runs beside the investigation (scoring, executive summary, compose):
 * defaults → chain → the job's own selectors (defaults', then the chain's). Stage lists never
 * reach it. For the compose stage: `resolveJobFallbackProviders(config, chain,
 * [{ fallback_list: chain.compose_fallback_list }, { fallback_list: defaults.compose_fallback_list }])`.
 */
export function resolveJobFallbackProviders(
  config: TarsyConfig,
  chain: ChainConfig,
  jobLevelsMostSpecificFirst: readonly FallbackLevel[],
  context: string,
): ResolvedFallbackEntry[] {
  return resolveFallbackProviders(
    config,
    [...jobLevelsMostSpecificFirst, chain, config.defaults],
    context,
  );
}

/** Gemini native tools an execution has switched on (google_search, code_execution, url_context). */
export function enabledNativeTools(tools: NativeToolsConfig | undefined): string[] {
  if (!tools) return [];
  return Object.entries(tools)
    .filter(([, on]) => on === true)
    .map(([name]) => name);
}

/**
 * Whether an entry can stand in for an agent whose definition relies on Gemini native tools:
 * only the google-native backend serves them, so any other entry would leave it without
 * them (an agent that merely runs on a Gemini provider can fall back anywhere).
 */
export function servesNativeTools(entry: { backend: LlmBackend }, requiresNativeTools: boolean) {
  return !requiresNativeTools || entry.backend === "google-native";
}
