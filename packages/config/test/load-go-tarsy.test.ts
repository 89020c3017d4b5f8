/**
 * Configs shaped like the Go TARSy's examples (our own files in test/go-tarsy/, written the way
 * its quickstart and full example write them) load unchanged, with no environment at all.
 */
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import {
  isScoringEnabled,
  loadConfig,
  resolveAgentConfig,
  resolveLabelMap,
  resolveMcpSelection,
  resolveOrchestratorLimits,
  resolveScoringConfig,
  subAgentCatalog,
} from "../src/index.ts";
import { loadIssues, withoutLines } from "./helpers.ts";

const GO = resolve(import.meta.dirname, "go-tarsy");

describe("the Go TARSy's configuration shapes", () => {
  it("quickstart: loads, its compose provider read (nothing of it left unsupported)", () => {
    const { config, warnings } = loadConfig({ configDir: join(GO, "quickstart"), env: {} });
    expect(config.defaults).toMatchObject({
      llm_provider: "google-default",
      max_iterations: 20,
      llm_backend: "langchain",
    });
    expect(
      warnings.filter((w) => w.unsupported).map((w) => [w.path, w.unsupported?.issue]),
    ).toEqual([]);
    expect(config.defaults.compose_provider).toBe("google-default");
    // defaults.memory is read: the quickstart turns it off; the embedding keeps its default.
    expect(config.defaults.memory).toMatchObject({
      enabled: false,
      max_inject: 5,
      embedding: { provider: "google", model: "gemini-embedding-2-preview", dimensions: 768 },
    });
    // defaults.scoring is acted on: every chain's completed sessions are scored.
    const chain = config.chains.get("kubernetes-agent-chain");
    if (!chain) throw new Error("the built-in chain is missing");
    expect(isScoringEnabled(config, chain)).toBe(true);
    expect(resolveScoringConfig(config, chain)).toMatchObject({
      agent_name: "ScoringAgent",
      llm_provider_name: "google-default",
    });
  });

  it("full example: every construct loads, missing variables are warnings, not errors", () => {
    const dir = join(GO, "full");
    const file = join(dir, "tarsy.yaml");
    const { config, warnings } = loadConfig({ configDir: dir, env: {} });

    // A missing {{.VAR}} in a stdio argument: empty, with a warning naming it and where.
    expect(config.mcpServers.get("kubernetes-server")?.transport).toMatchObject({
      args: [
        "-y",
        "kubernetes-mcp-server@0.0.54",
        "--read-only",
        "--disable-destructive",
        "--kubeconfig",
        "",
      ],
    });
    expect(warnings).toContainEqual({
      file,
      path: "mcp_servers.kubernetes-server.transport.args[5]",
      message: 'environment variable "KUBECONFIG" is not set; using an empty value',
    });
    // ${VAR} is never interpolated.
    expect(
      config.mcpServers.get("kubernetes-server")?.data_masking.custom_patterns[0]?.pattern,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the literal is the expected text
    ).toBe("user_${USER_ID}_.*");
    // {{.SESSION_ID}} is kept for run time.
    expect(config.mcpServers.get("cli-mcp-server")?.transport).toMatchObject({
      custom_headers: { "X-Session-ID": "{{.SESSION_ID}}" },
      session_cleanup_url: "https://cli-mcp-server:8443/sessions/{{.SESSION_ID}}",
      verify_ssl: false,
      timeout_ms: 90_000,
    });
    // Holidays for the prompts' calendar line.
    expect(config.system.holidays).toEqual([
      { date: "12-24", name: "Christmas Eve" },
      { date: "12-25", name: "Christmas" },
      { date: "01-01", name: "New Year's Day" },
    ]);
    // A fallback entry without a backend means langchain.
    expect(
      config.chains.get("kubernetes-pod-crashloop")?.stages[0]?.agents[0]?.fallback_providers,
    ).toEqual([{ provider: "claude-sonnet", backend: "langchain" }]);
    // enabled: false — a warning where an agent names it, and never offered.
    expect(warnings).toContainEqual({
      file,
      path: "agents.security-agent.mcp_servers[2]",
      message:
        'MCP server "legacy-server" is disabled (enabled: false); it is left out of the tools',
    });
    const agent = config.agents.get("security-agent");
    expect(
      resolveMcpSelection(config, { mcp_servers: agent?.mcp_servers ?? [] }).server_ids,
    ).toEqual(["kubernetes-server", "argocd-server"]);
    // Every Go key this implementation does not act on yet is listed, none is an error.
    const unsupported = warnings.filter((w) => w.unsupported).map((w) => w.path);
    // prompt caching and reasoning effort are read, not listed.
    expect(unsupported.filter((p) => /prompt_caching|reasoning_effort/.test(p))).toEqual([]);
    expect(config.llmProviders.get("claude-sonnet")?.reasoning_effort).toBe("medium");
    // Named fallback lists and the summarization model are acted on: none is listed.
    expect(unsupported.filter((path) => /fallback_list|summarization/.test(path))).toEqual([]);
    expect(config.fallbackLists.get("default-walk")).toEqual([
      { provider: "gemini-2.5-flash", backend: "google-native" },
      { provider: "claude-sonnet", backend: "langchain" },
    ]);
    expect(config.mcpServers.get("monitoring-server")?.summarization.llm_provider).toBe(
      "gemini-2.5-flash",
    );
    const multi = config.chains.get("kubernetes-multiple-agents");
    if (!multi?.stages[0]?.agents[1]) throw new Error("the parallel stage is missing");
    expect(
      resolveAgentConfig(config, multi, 0, multi.stages[0].agents[1]).fallback_providers.map(
        (entry) => entry.provider_name,
      ),
    ).toEqual(["gemini-2.5-flash", "claude-sonnet"]);
    // The deprecated inline list still works, with a warning where it is written.
    expect(warnings).toContainEqual({
      file,
      path: "agent_chains.kubernetes-pod-crashloop.stages[0].agents[0].fallback_providers",
      message:
        "fallback_providers is deprecated: name a list of the fallback_lists catalog with fallback_list instead",
    });
    // sub_agents are read at every level: none is listed as ignored.
    expect(warnings.filter((w) => w.message.includes("sub_agents"))).toEqual([]);
    expect(unsupported.filter((path) => path.includes("sub_agents"))).toEqual([]);
    const orchestrator = config.agents.get("Orchestrator");
    expect(orchestrator?.sub_agents).toEqual([
      { name: "security-agent" },
      { name: "KubernetesAgent" },
    ]);
    // security-agent has no description: it loads, but is left out of the catalog, with a warning.
    expect(warnings).toContainEqual({
      file,
      path: "agents.Orchestrator.sub_agents[0]",
      message:
        'agent "security-agent" has no description: it is left out of the sub-agent catalog (an orchestrating agent picks sub-agents by their description)',
    });
    expect(subAgentCatalog(config, orchestrator?.sub_agents ?? []).map((s) => s.name)).toEqual([
      "KubernetesAgent",
    ]);
    expect(resolveOrchestratorLimits(config, orchestrator)).toEqual({ max_concurrent_agents: 5 });
    // `type` is read: orchestrator loads, runs as a default agent, and says so (#24).
    expect(unsupported).not.toContain("agents.Orchestrator.type");
    expect(config.agents.get("Orchestrator")?.type).toBe("orchestrator");
    expect(warnings).toContainEqual({
      file,
      path: "agents.Orchestrator.type",
      message:
        'type "orchestrator" is not needed: an agent orchestrates when it has a sub-agent catalog (the Go TARSy dropped the type too); runs as a default agent',
    });
    // Skills are acted on: the agent's allowlist and required skills, from skills/.
    expect(unsupported.filter((path) => path.includes("skills"))).toEqual([]);
    expect([...config.skills.keys()].sort()).toEqual(["escalation", "kubectl-basics"]);
    expect(config.agents.get("Orchestrator")).toMatchObject({
      skills: ["kubectl-basics", "escalation"],
      required_skills: ["escalation"],
    });
    // Scoring is acted on: the chain's `scoring.enabled` is read.
    expect(unsupported.filter((path) => path.endsWith("scoring"))).toEqual([]);
    const crashloop = config.chains.get("kubernetes-pod-crashloop");
    expect(crashloop?.scoring).toEqual({ enabled: true });
    expect(warnings.filter((w) => w.message.includes("is not a known setting"))).toEqual([]);
    // Slack, cost estimation and retention are acted on: read, not listed.
    for (const key of ["system.slack", "system.cost_estimation", "system.retention"]) {
      expect(unsupported).not.toContain(key);
    }
    expect(config.system.slack).toMatchObject({
      enabled: false,
      token_env: "SLACK_BOT_TOKEN",
      channel: "C12345678",
    });
    expect(config.system.cost_estimation.enabled).toBe(true);
    expect(config.system.retention.session_retention_days).toBe(365);
    // Session labels are acted on: the catalog, defaults.label_map and a chain's selector.
    expect(unsupported.filter((path) => path.includes("label_map"))).toEqual([]);
    expect([...config.labelMaps.keys()]).toEqual(["oncall", "ops-tags", "builtin"]);
    expect(config.labelMaps.get("oncall")?.labels.map((l) => l.label)).toEqual([
      "monitor",
      "page",
      "false_positive",
    ]);
    expect(resolveLabelMap(config, crashloop).name).toBe("oncall");
    expect(resolveLabelMap(config, config.chains.get("kubernetes-2-replicas")).name).toBe(
      "builtin",
    );
  });

  it("a malformed holiday is an error with its path", () => {
    const issues = withoutLines(
      loadIssues({
        tarsy: 'system:\n  holidays:\n    - { date: "2026-12-25", name: Christmas }\n',
      }),
    );
    expect(issues).toEqual([
      {
        file: "tarsy.yaml",
        path: "system.holidays[0].date",
        message: '"2026-12-25" is not a MM-DD date',
      },
    ]);
  });
});
