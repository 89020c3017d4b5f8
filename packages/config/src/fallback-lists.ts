import type { ConfigIssue } from "./errors.ts";
import { formatPath } from "./interpolate.ts";
import { isBackendCompatible } from "./resolve.ts";
import type { ConfigWarning, FallbackProviderEntry, TarsyConfig } from "./types.ts";
import { forEachSubAgentList, type InvalidNames, type LineOf } from "./validate.ts";

/** Checks of the `fallback_lists` catalog and of every `fallback_list` selector (ADR-0030). */

type Segment = string | number;

/** Every `fallback_list` / `*_fallback_list` selector written in the configuration. */
export function forEachFallbackListSelector(
  config: TarsyConfig,
  visit: (file: string, path: Segment[], name: string) => void,
): void {
  const at = (file: string, path: Segment[], name: string | undefined) => {
    if (name) visit(file, path, name);
  };
  const { defaults, sources } = config;
  const d = sources.defaults;
  at(d, ["defaults", "fallback_list"], defaults.fallback_list);
  at(d, ["defaults", ...execSummaryList(defaults)], defaults.executive_summary_fallback_list);
  at(d, ["defaults", "scoring", "fallback_list"], defaults.scoring?.fallback_list);
  at(d, ["defaults", "summarization", "fallback_list"], defaults.summarization?.fallback_list);
  at(d, ["defaults", "compose_fallback_list"], defaults.compose_fallback_list);
  for (const [name, pairing] of Object.entries(defaults.agents ?? {})) {
    at(d, ["defaults", "agents", name, "fallback_list"], pairing.fallback_list);
  }
  for (const chain of config.chains.values()) {
    const file = sources.chains.get(chain.id) ?? "";
    const base: Segment[] = ["agent_chains", chain.id];
    at(file, [...base, "fallback_list"], chain.fallback_list);
    at(file, [...base, ...execSummaryList(chain)], chain.executive_summary_fallback_list);
    at(file, [...base, "scoring", "fallback_list"], chain.scoring?.fallback_list);
    at(file, [...base, "compose_fallback_list"], chain.compose_fallback_list);
    at(file, [...base, "chat", "fallback_list"], chain.chat.fallback_list);
    chain.stages.forEach((stage, s) => {
      const stagePath: Segment[] = [...base, "stages", s];
      at(file, [...stagePath, "fallback_list"], stage.fallback_list);
      at(file, [...stagePath, "synthesis", "fallback_list"], stage.synthesis?.fallback_list);
      stage.agents.forEach((ref, a) => {
        at(file, [...stagePath, "agents", a, "fallback_list"], ref.fallback_list);
      });
    });
  }
  forEachSubAgentList(config, (file, path, refs) => {
    refs.forEach((ref, index) => {
      at(file, [...path, index, "fallback_list"], ref.fallback_list);
    });
  });
}

/** Where a node's executive-summary list is written: nested or flat. */
function execSummaryList(node: { executive_summary_nested?: boolean }): Segment[] {
  return node.executive_summary_nested
    ? ["executive_summary", "fallback_list"]
    : ["executive_summary_fallback_list"];
}

/** Every deprecated `fallback_providers` list written in the configuration. */
export function forEachFallbackProvidersList(
  config: TarsyConfig,
  visit: (file: string, path: Segment[], list: readonly FallbackProviderEntry[]) => void,
): void {
  const { defaults, sources } = config;
  if (defaults.fallback_providers) {
    visit(sources.defaults, ["defaults", "fallback_providers"], defaults.fallback_providers);
  }
  for (const chain of config.chains.values()) {
    const file = sources.chains.get(chain.id) ?? "";
    const base: Segment[] = ["agent_chains", chain.id];
    if (chain.fallback_providers) {
      visit(file, [...base, "fallback_providers"], chain.fallback_providers);
    }
    chain.stages.forEach((stage, s) => {
      const stagePath: Segment[] = [...base, "stages", s];
      if (stage.fallback_providers) {
        visit(file, [...stagePath, "fallback_providers"], stage.fallback_providers);
      }
      stage.agents.forEach((ref, a) => {
        if (ref.fallback_providers) {
          visit(file, [...stagePath, "agents", a, "fallback_providers"], ref.fallback_providers);
        }
      });
    });
  }
}

/** The catalog lists some selector names (only those need working credentials). */
export function referencedFallbackLists(config: TarsyConfig): Set<string> {
  const names = new Set<string>();
  forEachFallbackListSelector(config, (_file, _path, name) => names.add(name));
  return names;
}

/**
 * Load errors: a catalog entry with an unknown provider or a backend that cannot drive it;
 * a selector naming a list the catalog lacks (with its line); `defaults.agents` naming an
 * unknown agent or provider; summarization and executive-summary providers that do not exist.
 */
export function fallbackListIssues(
  config: TarsyConfig,
  catalogFile: string,
  invalid: InvalidNames,
  lineOf: LineOf,
): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const report = (file: string, path: Segment[], message: string) => {
    const line = lineOf(file, path);
    issues.push({ file, path: formatPath(path), message, ...(line !== undefined && { line }) });
  };
  const providerIssue = (file: string, path: Segment[], name: string | undefined) => {
    if (name !== undefined && !config.llmProviders.has(name) && !invalid.llmProviders.has(name)) {
      report(file, path, `unknown LLM provider "${name}"`);
    }
  };
  for (const [name, entries] of config.fallbackLists) {
    entries.forEach((entry, index) => {
      const at: Segment[] = ["fallback_lists", name, index];
      const provider = config.llmProviders.get(entry.provider);
      if (!provider) {
        providerIssue(catalogFile, [...at, "llm_provider"], entry.provider);
      } else if (!isBackendCompatible(entry.backend, provider.type, provider.model)) {
        report(
          catalogFile,
          [...at, "llm_backend"],
          `backend "${entry.backend}" cannot run LLM provider "${entry.provider}" (type ${provider.type})`,
        );
      }
    });
  }
  forEachFallbackListSelector(config, (file, path, name) => {
    if (config.fallbackLists.has(name)) return;
    const known = [...config.fallbackLists.keys()];
    report(
      file,
      path,
      `unknown fallback list "${name}" (fallback_lists has ${known.length > 0 ? known.map((k) => `"${k}"`).join(", ") : "no lists"})`,
    );
  });
  const d = config.sources.defaults;
  for (const [name, pairing] of Object.entries(config.defaults.agents ?? {})) {
    if (!config.agents.has(name) && !invalid.agents.has(name)) {
      report(d, ["defaults", "agents", name], `unknown agent "${name}"`);
    }
    providerIssue(d, ["defaults", "agents", name, "llm_provider"], pairing.llm_provider);
  }
  providerIssue(
    d,
    ["defaults", "summarization", "llm_provider"],
    config.defaults.summarization?.llm_provider,
  );
  providerIssue(
    d,
    config.defaults.executive_summary_nested
      ? ["defaults", "executive_summary", "llm_provider"]
      : ["defaults", "executive_summary_provider"],
    config.defaults.executive_summary_provider,
  );
  for (const [id, server] of config.mcpServers) {
    providerIssue(
      config.sources.mcpServers.get(id) ?? "",
      ["mcp_servers", id, "summarization", "llm_provider"],
      server.summarization.llm_provider,
    );
  }
  return issues;
}

/** `fallback_providers` still works but is deprecated: one warning per place it is written. */
export function fallbackProvidersDeprecations(config: TarsyConfig): ConfigWarning[] {
  const warnings: ConfigWarning[] = [];
  forEachFallbackProvidersList(config, (file, path) => {
    warnings.push({
      file,
      path: formatPath(path),
      message:
        "fallback_providers is deprecated: name a list of the fallback_lists catalog with fallback_list instead",
    });
  });
  return warnings;
}
