import { UnknownReferenceError } from "./errors.ts";
import type {
  FallbackProviderEntry,
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

/**
 * The fallback list of an execution: the first level (most specific first) that sets
 * `fallback_providers` wins, even when its list is empty (`[]` turns fallback off).
 */
export function resolveFallbackProviders(
  config: TarsyConfig,
  levelsMostSpecificFirst: readonly (
    | { fallback_providers?: FallbackProviderEntry[] }
    | undefined
  )[],
  context: string,
  agentNativeTools?: NativeToolsConfig,
): ResolvedFallbackEntry[] {
  const list = levelsMostSpecificFirst.find(
    (level) => level?.fallback_providers !== undefined,
  )?.fallback_providers;
  return (list ?? []).map((entry) => {
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
