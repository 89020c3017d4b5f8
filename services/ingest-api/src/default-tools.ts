import type { LlmProviderConfig, TarsyConfig } from "@tarsy/config";
import { type DefaultToolsResponse, NATIVE_TOOL_NAMES } from "@tarsy/contracts";

/** Providers whose API has Gemini's native tools. */
const offersNativeTools = (p: LlmProviderConfig) => p.type === "google";

/** Each native tool on or off as `p` configures it (unnamed: off). */
function toolsOf(p: LlmProviderConfig): DefaultToolsResponse["native_tools"] {
  const configured = p.native_tools ?? {};
  return {
    google_search: configured.google_search === true,
    code_execution: configured.code_execution === true,
    url_context: configured.url_context === true,
  };
}

/**
 * `GET /api/v1/system/default-tools`, as the Go TARSy answers it: the default provider's
 * native tools (or, without a default provider, the first Google provider's), every tool off
 * unless the config turns it on; plus each provider's own.
 */
export function defaultTools(config: TarsyConfig): DefaultToolsResponse {
  const providers = [...config.llmProviders.values()];
  const named = config.defaults.llm_provider
    ? config.llmProviders.get(config.defaults.llm_provider)
    : providers.find(offersNativeTools);
  const source = named && offersNativeTools(named) ? named : undefined;
  const off = Object.fromEntries(NATIVE_TOOL_NAMES.map((t) => [t, false]));
  return {
    native_tools: source ? toolsOf(source) : (off as DefaultToolsResponse["native_tools"]),
    source_provider: source?.name ?? null,
    providers: providers.map((p) => ({
      name: p.name,
      type: p.type,
      native_tools: offersNativeTools(p) ? toolsOf(p) : {},
    })),
  };
}
