import { ConfigError } from "./errors.ts";

/**
 * Canonical tool names are "server.tool". Provider function names may not contain dots
 * (Gemini, OpenAI: [a-zA-Z0-9_-]), so every "." becomes "__" on the way out and the
 * per-request table maps names back exactly on the way in.
 */
export function toProviderToolName(canonical: string): string {
  return canonical.replaceAll(".", "__");
}

export interface ToolNameMap {
  toProvider(canonical: string): string;
  toCanonical(providerName: string): string;
}

export function createToolNameMap(canonicalNames: readonly string[]): ToolNameMap {
  const back = new Map<string, string>();
  for (const name of canonicalNames) {
    const mapped = toProviderToolName(name);
    const previous = back.get(mapped);
    if (previous !== undefined && previous !== name) {
      throw new ConfigError(`tool names "${previous}" and "${name}" collide as "${mapped}"`);
    }
    back.set(mapped, name);
  }
  return {
    toProvider: toProviderToolName,
    toCanonical: (providerName) => back.get(providerName) ?? providerName.replace("__", "."),
  };
}
