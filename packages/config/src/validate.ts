import type { ConfigIssue } from "./errors.ts";
import { formatPath } from "./interpolate.ts";
import {
  isBackendCompatible,
  type ResolvedAgentConfig,
  resolveAgentConfig,
  resolveChatAgentConfig,
  resolveComposeModel,
  resolveSynthesisConfig,
} from "./resolve.ts";
import type {
  ChainConfig,
  ConfigWarning,
  FallbackProviderEntry,
  SubAgentRef,
  TarsyConfig,
} from "./types.ts";

/** Entries that failed to parse: references to them are not reported a second time. */
export interface InvalidNames {
  agents: ReadonlySet<string>;
  chains: ReadonlySet<string>;
  mcpServers: ReadonlySet<string>;
  llmProviders: ReadonlySet<string>;
}

type Segment = string | number;

/** The file line of the YAML node at `path` in `file`, where the loader knows it. */
export type LineOf = (file: string, path: readonly Segment[]) => number | undefined;

/**
 * Every `sub_agents` list of the configuration with the file and path it is written at:
 * agent definitions, chains, stages, stage agents and chats.
 */
export function forEachSubAgentList(
  config: TarsyConfig,
  visit: (file: string, path: Segment[], refs: readonly SubAgentRef[]) => void,
): void {
  for (const agent of config.agents.values()) {
    if (!agent.sub_agents) continue;
    visit(
      config.sources.agents.get(agent.name) ?? "",
      ["agents", agent.name, "sub_agents"],
      agent.sub_agents,
    );
  }
  for (const chain of config.chains.values()) {
    const file = config.sources.chains.get(chain.id) ?? "";
    const base: Segment[] = ["agent_chains", chain.id];
    if (chain.sub_agents) visit(file, [...base, "sub_agents"], chain.sub_agents);
    chain.stages.forEach((stage, s) => {
      const stagePath: Segment[] = [...base, "stages", s];
      if (stage.sub_agents) visit(file, [...stagePath, "sub_agents"], stage.sub_agents);
      stage.agents.forEach((ref, a) => {
        if (ref.sub_agents) visit(file, [...stagePath, "agents", a, "sub_agents"], ref.sub_agents);
      });
    });
    if (chain.chat.sub_agents) visit(file, [...base, "chat", "sub_agents"], chain.chat.sub_agents);
  }
}

/** Cross-entry checks: references, alert type conflicts, backend/provider compatibility. */
export function validateReferences(
  config: TarsyConfig,
  invalid: InvalidNames,
  lineOf: LineOf = () => undefined,
): ConfigIssue[] {
  const sources = config.sources;
  const issues: ConfigIssue[] = [];
  const report = (file: string, path: Segment[], message: string) =>
    issues.push({ file, path: formatPath(path), message });

  for (const [id, server] of config.mcpServers) {
    const file = sources.mcpServers.get(id) ?? "";
    const { auth } = server;
    if (auth.mode !== "shared" && server.transport.type === "stdio") {
      report(
        file,
        ["mcp_servers", id, "auth", "mode"],
        `${auth.mode} needs an http or sse transport (a stdio server takes no bearer token)`,
      );
    }
    const exchange = auth.token_exchange;
    // An interpolated secret whose variable is unset is "" (warned about where it is read).
    if (exchange && exchange.client_secret === undefined && !exchange.client_secret_env) {
      report(
        file,
        ["mcp_servers", id, "auth", "token_exchange"],
        "needs client_secret (e.g. {{.STS_CLIENT_SECRET}}) or client_secret_env",
      );
    }
  }
  const checkServers = (file: string, path: Segment[], ids: readonly string[] | undefined) => {
    ids?.forEach((id, index) => {
      if (!config.mcpServers.has(id) && !invalid.mcpServers.has(id)) {
        report(file, [...path, index], `unknown MCP server "${id}"`);
      }
    });
  };
  const checkAgent = (file: string, path: Segment[], name: string | undefined) => {
    if (name !== undefined && !config.agents.has(name) && !invalid.agents.has(name)) {
      report(file, path, `unknown agent "${name}"`);
    }
  };
  const checkProvider = (file: string, path: Segment[], name: string | undefined) => {
    if (name !== undefined && !config.llmProviders.has(name) && !invalid.llmProviders.has(name)) {
      report(file, path, `unknown LLM provider "${name}"`);
    }
  };

  /** Every entry names a known provider and a backend that can drive it. */
  const checkFallbacks = (
    file: string,
    path: Segment[],
    list: readonly FallbackProviderEntry[] | undefined,
  ) => {
    list?.forEach((entry, index) => {
      const at = [...path, "fallback_providers", index];
      const provider = config.llmProviders.get(entry.provider);
      if (!provider) {
        checkProvider(file, [...at, "provider"], entry.provider);
        return;
      }
      if (!isBackendCompatible(entry.backend, provider.type, provider.model)) {
        report(
          file,
          [...at, "backend"],
          `backend "${entry.backend}" cannot run fallback LLM provider "${entry.provider}" (type ${provider.type})`,
        );
      }
    });
  };

  for (const agent of config.agents.values()) {
    const file = sources.agents.get(agent.name) ?? "";
    checkServers(file, ["agents", agent.name, "mcp_servers"], agent.mcp_servers);
  }

  // Sub-agent references: an unknown agent is an error with the line it is written on.
  forEachSubAgentList(config, (file, path, refs) => {
    refs.forEach((ref, index) => {
      const at = [...path, index];
      if (!config.agents.has(ref.name) && !invalid.agents.has(ref.name)) {
        const line = lineOf(file, at);
        issues.push({
          file,
          path: formatPath(at),
          message: `unknown agent "${ref.name}" in sub_agents`,
          ...(line !== undefined && { line }),
        });
      }
      checkProvider(file, [...at, "llm_provider"], ref.llm_provider);
      checkServers(file, [...at, "mcp_servers"], ref.mcp_servers);
    });
  });

  checkProvider(sources.defaults, ["defaults", "llm_provider"], config.defaults.llm_provider);
  checkFallbacks(sources.defaults, ["defaults"], config.defaults.fallback_providers);
  checkProvider(
    sources.defaults,
    ["defaults", "compose_provider"],
    config.defaults.compose_provider,
  );
  /** A compose_backend from defaults that cannot drive a chain's compose provider: said once. */
  let defaultComposeBackendReported = false;

  const claimedBy = new Map<string, string>();
  for (const chain of config.chains.values()) {
    const file = sources.chains.get(chain.id) ?? "";
    const base: Segment[] = ["agent_chains", chain.id];
    checkProvider(file, [...base, "llm_provider"], chain.llm_provider);
    checkProvider(file, [...base, "compose_provider"], chain.compose_provider);
    if (chain.compose_backend !== undefined) {
      checkBackend(file, [...base, "compose_backend"], () => resolveComposeModel(config, chain));
    } else if (config.defaults.compose_backend !== undefined && !defaultComposeBackendReported) {
      const before = issues.length;
      checkBackend(sources.defaults, ["defaults", "compose_backend"], () =>
        resolveComposeModel(config, chain),
      );
      defaultComposeBackendReported = issues.length > before;
    }
    checkProvider(
      file,
      chain.executive_summary_nested
        ? [...base, "executive_summary", "llm_provider"]
        : [...base, "executive_summary_provider"],
      chain.executive_summary_provider,
    );
    checkServers(file, [...base, "mcp_servers"], chain.mcp_servers);
    checkFallbacks(file, base, chain.fallback_providers);
    chain.alert_types.forEach((alertType, index) => {
      const other = claimedBy.get(alertType);
      if (other !== undefined && other !== chain.id) {
        report(
          file,
          [...base, "alert_types", index],
          `alert type "${alertType}" is already handled by chain "${other}"`,
        );
      } else {
        claimedBy.set(alertType, chain.id);
      }
    });
    const stageNames = new Set<string>();
    chain.stages.forEach((stage, stageIndex) => {
      const stagePath: Segment[] = [...base, "stages", stageIndex];
      if (stageNames.has(stage.name)) {
        report(file, [...stagePath, "name"], `duplicate stage name "${stage.name}"`);
      }
      stageNames.add(stage.name);
      checkFallbacks(file, stagePath, stage.fallback_providers);
      stage.agents.forEach((agent, agentIndex) => {
        const agentPath: Segment[] = [...stagePath, "agents", agentIndex];
        checkAgent(file, [...agentPath, "name"], agent.name);
        checkProvider(file, [...agentPath, "llm_provider"], agent.llm_provider);
        checkServers(file, [...agentPath, "mcp_servers"], agent.mcp_servers);
        checkFallbacks(file, agentPath, agent.fallback_providers);
        checkBackend(file, agentPath, () => resolveAgentConfig(config, chain, stageIndex, agent));
      });
      if (stage.synthesis) {
        checkAgent(file, [...stagePath, "synthesis", "agent"], stage.synthesis.agent);
        checkProvider(
          file,
          [...stagePath, "synthesis", "llm_provider"],
          stage.synthesis.llm_provider,
        );
      }
      if (stage.agents.length > 1 || stage.replicas > 1) {
        checkBackend(file, [...stagePath, "synthesis"], () =>
          resolveSynthesisConfig(config, chain, stageIndex),
        );
      }
    });
    checkChat(chain, file, base);
    if (chain.scoring) {
      const scoring: Segment[] = [...base, "scoring"];
      checkAgent(file, [...scoring, "agent"], chain.scoring.agent);
      checkProvider(file, [...scoring, "llm_provider"], chain.scoring.llm_provider);
      checkServers(file, [...scoring, "mcp_servers"], chain.scoring.mcp_servers);
    }
  }
  const defaultScoring = config.defaults.scoring;
  if (defaultScoring) {
    const scoring: Segment[] = ["defaults", "scoring"];
    checkAgent(sources.defaults, [...scoring, "agent"], defaultScoring.agent);
    checkProvider(sources.defaults, [...scoring, "llm_provider"], defaultScoring.llm_provider);
    checkServers(sources.defaults, [...scoring, "mcp_servers"], defaultScoring.mcp_servers);
  }

  const defaultType = config.defaults.alert_type;
  if (!claimedBy.has(defaultType) && !(invalid.chains.size > 0)) {
    report(
      sources.defaults,
      ["defaults", "alert_type"],
      `no chain handles the default alert type "${defaultType}"`,
    );
  }
  return issues;

  function checkChat(chain: ChainConfig, file: string, base: Segment[]) {
    const chat = chain.chat;
    checkAgent(file, [...base, "chat", "agent"], chat.agent);
    checkProvider(file, [...base, "chat", "llm_provider"], chat.llm_provider);
    checkServers(file, [...base, "chat", "mcp_servers"], chat.mcp_servers);
    if (chat.enabled) {
      checkBackend(file, [...base, "chat"], () => resolveChatAgentConfig(config, chain));
    }
  }

  /** Reports a backend the resolved provider cannot run; unknown references are reported above. */
  function checkBackend(
    file: string,
    path: Segment[],
    resolve: () => Pick<ResolvedAgentConfig, "llm_provider" | "llm_provider_name" | "llm_backend">,
  ) {
    let resolved: Pick<ResolvedAgentConfig, "llm_provider" | "llm_provider_name" | "llm_backend">;
    try {
      resolved = resolve();
    } catch {
      return;
    }
    const { type, model } = resolved.llm_provider;
    if (!isBackendCompatible(resolved.llm_backend, type, model)) {
      report(
        file,
        path,
        `llm_backend "${resolved.llm_backend}" cannot run LLM provider "${resolved.llm_provider_name}" (type ${type}${type === "vertexai" ? `, model ${model}: google-native speaks Gemini only` : ""})`,
      );
    }
  }
}

/**
 * An agent whose definition needs Gemini native tools can only fall back to google-native
 * entries (the others are skipped at run time). A fallback list with none of those gives it
 * no fallback at all: worth a warning, not an error (TARSy's rule).
 */
export function nativeToolFallbackWarnings(config: TarsyConfig): ConfigWarning[] {
  const warnings: ConfigWarning[] = [];
  for (const chain of config.chains.values()) {
    chain.stages.forEach((stage, stageIndex) => {
      stage.agents.forEach((agent, agentIndex) => {
        let resolved: ResolvedAgentConfig;
        try {
          resolved = resolveAgentConfig(config, chain, stageIndex, agent);
        } catch {
          return; // reported as an error already
        }
        const list = resolved.fallback_providers;
        if (!resolved.requires_native_tools || list.length === 0) return;
        if (list.some((entry) => entry.backend === "google-native")) return;
        warnings.push({
          file: config.sources.chains.get(chain.id) ?? "",
          path: formatPath(["agent_chains", chain.id, "stages", stageIndex, "agents", agentIndex]),
          message: `agent "${agent.name}" needs Gemini native tools, but no entry of its fallback_providers uses the google-native backend: it cannot fall back`,
        });
      });
    });
  }
  return warnings;
}

/**
 * Sub-agent references to an agent without a `description`: the orchestrating agent chooses
 * by description, so such an agent is left out of the catalog (it still loads).
 */
export function subAgentWarnings(config: TarsyConfig): ConfigWarning[] {
  const warnings: ConfigWarning[] = [];
  forEachSubAgentList(config, (file, path, refs) => {
    refs.forEach((ref, index) => {
      const agent = config.agents.get(ref.name);
      if (!agent || agent.description) return;
      warnings.push({
        file,
        path: formatPath([...path, index]),
        message: `agent "${ref.name}" has no description: it is left out of the sub-agent catalog (an orchestrating agent picks sub-agents by their description)`,
      });
    });
  });
  return warnings;
}

/** Agents and chains naming a server with `enabled: false`: it is left out of their tools. */
export function disabledServerWarnings(config: TarsyConfig): ConfigWarning[] {
  const disabled = new Set(
    [...config.mcpServers.values()].filter((s) => s.enabled === false).map((s) => s.id),
  );
  if (disabled.size === 0) return [];
  const warnings: ConfigWarning[] = [];
  const check = (file: string, path: Segment[], servers: readonly string[] | undefined) => {
    (servers ?? []).forEach((id, index) => {
      if (!disabled.has(id)) return;
      warnings.push({
        file,
        path: formatPath([...path, index]),
        message: `MCP server "${id}" is disabled (enabled: false); it is left out of the tools`,
      });
    });
  };
  for (const agent of config.agents.values()) {
    check(
      config.sources.agents.get(agent.name) ?? "",
      ["agents", agent.name, "mcp_servers"],
      agent.mcp_servers,
    );
  }
  for (const chain of config.chains.values()) {
    const file = config.sources.chains.get(chain.id) ?? "";
    const base: Segment[] = ["agent_chains", chain.id];
    check(file, [...base, "mcp_servers"], chain.mcp_servers);
    chain.stages.forEach((stage, s) => {
      stage.agents.forEach((agent, a) => {
        check(file, [...base, "stages", s, "agents", a, "mcp_servers"], agent.mcp_servers);
      });
    });
    check(file, [...base, "chat", "mcp_servers"], chain.chat.mcp_servers);
  }
  forEachSubAgentList(config, (file, path, refs) => {
    refs.forEach((ref, index) => {
      check(file, [...path, index, "mcp_servers"], ref.mcp_servers);
    });
  });
  return warnings;
}

/**
 * Skill references: every name in `skills` and `required_skills` (of an agent, and of a stage's
 * agent reference, which replaces the agent's) is a skill of `<configDir>/skills/`, and every
 * required skill is within the allowlist in force (`skills` unset allows every skill).
 */
export function validateSkillReferences(config: TarsyConfig): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const report = (file: string, path: Segment[], message: string) =>
    issues.push({ file, path: formatPath(path), message });
  const known = (names: readonly string[] | undefined, file: string, path: Segment[]) => {
    names?.forEach((name, index) => {
      if (!config.skills.has(name)) {
        const available = [...config.skills.keys()].join(", ") || "none";
        report(
          file,
          [...path, index],
          `unknown skill "${name}" (skills are read from ${config.configDir}/skills/; available: ${available})`,
        );
      }
    });
  };
  /** Required skills outside the allowlist; `path` is where the required list was set. */
  const withinAllowlist = (
    file: string,
    path: Segment[],
    allow: readonly string[] | undefined,
    required: readonly string[] | undefined,
    from: string,
  ) => {
    if (allow === undefined) return;
    required?.forEach((name, index) => {
      if (config.skills.has(name) && !allow.includes(name)) {
        report(
          file,
          [...path, index],
          `required skill "${name}"${from} is not in the agent's skills allowlist [${allow.join(", ")}]`,
        );
      }
    });
  };

  for (const agent of config.agents.values()) {
    const file = config.sources.agents.get(agent.name) ?? "";
    const base: Segment[] = ["agents", agent.name];
    known(agent.skills, file, [...base, "skills"]);
    known(agent.required_skills, file, [...base, "required_skills"]);
    withinAllowlist(file, [...base, "required_skills"], agent.skills, agent.required_skills, "");
  }
  for (const chain of config.chains.values()) {
    const file = config.sources.chains.get(chain.id) ?? "";
    chain.stages.forEach((stage, s) => {
      stage.agents.forEach((ref, a) => {
        if (ref.skills === undefined && ref.required_skills === undefined) return;
        const base: Segment[] = ["agent_chains", chain.id, "stages", s, "agents", a];
        known(ref.skills, file, [...base, "skills"]);
        known(ref.required_skills, file, [...base, "required_skills"]);
        const agent = config.agents.get(ref.name);
        const allow = ref.skills ?? agent?.skills;
        if (ref.required_skills !== undefined) {
          withinAllowlist(file, [...base, "required_skills"], allow, ref.required_skills, "");
        } else {
          withinAllowlist(
            file,
            [...base, "skills"],
            allow,
            agent?.required_skills,
            ` (required by agent "${ref.name}")`,
          );
        }
      });
    });
  }
  // A sub-agent reference adds skills to its agent's (no allowlist check: both lists add up).
  forEachSubAgentList(config, (file, path, refs) => {
    refs.forEach((ref, index) => {
      known(ref.skills, file, [...path, index, "skills"]);
      known(ref.required_skills, file, [...path, index, "required_skills"]);
    });
  });
  return issues;
}
