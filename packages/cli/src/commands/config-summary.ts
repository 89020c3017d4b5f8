import {
  BUILTIN_FILE,
  builtinAgents,
  builtinChains,
  builtinLlmProviders,
  builtinMcpServers,
  type ChainConfig,
  formatDuration,
  type McpServerConfig,
  type OrchestratorLimits,
  planStage,
  type ResolvedAgentConfig,
  resolveChatAgentConfig,
  resolveExecutiveSummaryConfig,
  resolveOrchestratorLimits,
  type TarsyConfig,
} from "@tarsy/config";

/** Human-readable summary of a loaded configuration (what `tarsy config check` prints). */

function origin(file: string | undefined, name: string, builtinNames: ReadonlySet<string>): string {
  if (file === BUILTIN_FILE) return " [built-in]";
  return builtinNames.has(name) ? " [overrides built-in]" : "";
}

/** "up to 5 at once, 20m each, 1h in all": an orchestrating agent's guardrails. */
function describeLimits(limits: OrchestratorLimits): string {
  return [
    `up to ${limits.max_concurrent_agents} at once`,
    limits.agent_timeout_ms === undefined ? "" : `${formatDuration(limits.agent_timeout_ms)} each`,
    limits.max_budget_ms === undefined ? "" : `${formatDuration(limits.max_budget_ms)} in all`,
  ]
    .filter(Boolean)
    .join(", ");
}

/** `, sub-agents: A, B (up to 5 at once)` for an execution with a sub-agent catalog. */
function describeSubAgents(resolved: ResolvedAgentConfig): string {
  if (resolved.sub_agents.length === 0) return "";
  const names = resolved.sub_agents.map((s) => s.name).join(", ");
  return `, sub-agents: ${names} (${describeLimits(resolved.orchestrator)})`;
}

function describeStage(config: TarsyConfig, chain: ChainConfig, index: number): string[] {
  const plan = planStage(config, chain, index);
  const lines = [
    `    ${index + 1}. ${plan.stage_name}` +
      (plan.parallel_type ? ` (${plan.parallel_type}, success policy ${plan.success_policy})` : ""),
  ];
  for (const execution of plan.executions) {
    const c = execution.config;
    lines.push(
      `       - ${execution.display_name}: ${c.llm_provider_name} (${c.llm_backend}), ` +
        `max ${c.max_iterations} iterations, tools: ${c.mcp_servers.join(", ") || "none"}` +
        describeSubAgents(c),
    );
  }
  return lines;
}

function describeChain(config: TarsyConfig, chain: ChainConfig, builtins: Set<string>): string[] {
  const lines = [`  ${chain.id}${origin(config.sources.chains.get(chain.id), chain.id, builtins)}`];
  lines.push(`    alert types: ${chain.alert_types.join(", ")}`);
  chain.stages.forEach((_, index) => {
    lines.push(...describeStage(config, chain, index));
  });
  const summary = resolveExecutiveSummaryConfig(config, chain);
  lines.push(`    executive summary: ${summary.llm_provider_name} (${summary.llm_backend})`);
  if (chain.chat.enabled) {
    const chat = resolveChatAgentConfig(config, chain);
    lines.push(
      `    chat: ${chat.agent_name} on ${chat.llm_provider_name} (${chat.llm_backend}), tools: ${chat.mcp_servers.join(", ") || "none"}` +
        describeSubAgents(chat),
    );
  } else {
    lines.push("    chat: disabled");
  }
  return lines;
}

function describeServer(server: McpServerConfig): string {
  const t = server.transport;
  const where =
    t.type === "stdio" ? `stdio: ${[t.command, ...t.args].join(" ")}` : `${t.type}: ${t.url}`;
  const m = server.data_masking;
  const masking = m.enabled
    ? `masking ${[...m.pattern_groups.map((g) => `group ${g}`), ...m.patterns, ...m.custom_patterns.map((p) => p.name)].join(", ") || "on"}`
    : "masking off";
  const s = server.summarization;
  const summarization = s.enabled
    ? `summarize > ${s.size_threshold_tokens} tokens`
    : "no summarization";
  const state = server.enabled === false ? "disabled (enabled: false); " : "";
  return `${state}${where}; ${masking}; ${summarization}`;
}

export function formatConfigSummary(config: TarsyConfig): string {
  const lines: string[] = [];
  const d = config.defaults;
  const q = config.queue;
  lines.push(`Configuration: ${config.configDir}`);
  lines.push(
    `Defaults: provider ${d.llm_provider}, max ${d.max_iterations} iterations, ` +
      `iteration timeout ${formatDuration(d.iteration_timeout_ms)}, alert type ${d.alert_type}, ` +
      `success policy ${d.success_policy ?? "any"}`,
  );
  lines.push(
    `Queue: max ${q.max_concurrent_sessions} concurrent sessions, session timeout ` +
      `${formatDuration(q.session_timeout_ms)}, chat timeout ${formatDuration(q.chat_timeout_ms)}`,
  );

  const chainBuiltins = new Set(builtinChains().map((c) => c.id));
  lines.push("", `Chains (${config.chains.size}):`);
  for (const chain of config.chains.values()) {
    lines.push(...describeChain(config, chain, chainBuiltins));
  }

  const agentBuiltins = new Set(builtinAgents().map((a) => a.name));
  lines.push("", `Agents (${config.agents.size}):`);
  for (const agent of config.agents.values()) {
    const subAgents = agent.sub_agents?.length
      ? `; sub-agents: ${agent.sub_agents.map((s) => s.name).join(", ")} (${describeLimits(resolveOrchestratorLimits(config, agent))})`
      : "";
    lines.push(
      `  ${agent.name}${origin(config.sources.agents.get(agent.name), agent.name, agentBuiltins)}: tools: ${agent.mcp_servers.join(", ") || "none"}${subAgents}`,
    );
  }

  if (config.skills.size > 0) {
    lines.push("", `Skills (${config.skills.size}):`);
    for (const skill of config.skills.values()) {
      lines.push(`  ${skill.name}: ${skill.description}`);
    }
  }

  const serverBuiltins = new Set(builtinMcpServers({}).map((s) => s.id));
  lines.push("", `MCP servers (${config.mcpServers.size}):`);
  for (const server of config.mcpServers.values()) {
    const from = config.sources.mcpServers.get(server.id);
    lines.push(
      `  ${server.id}${origin(from, server.id, serverBuiltins)}: ${describeServer(server)}`,
    );
  }

  const providerBuiltins = new Set(builtinLlmProviders().map((p) => p.name));
  lines.push("", `LLM providers (${config.llmProviders.size}):`);
  for (const p of config.llmProviders.values()) {
    const key = p.api_key_env ? `, key from ${p.api_key_env}` : "";
    lines.push(
      `  ${p.name}${origin(config.sources.llmProviders.get(p.name), p.name, providerBuiltins)}: ${p.type} ${p.model}${key}`,
    );
  }
  return `${lines.join("\n")}\n`;
}
