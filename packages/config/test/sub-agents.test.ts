/**
 * Sub-agents: `sub_agents` lists (short and long form) at every level, each execution's
 * catalog, the orchestrator guardrails and a sub-agent's own resolved configuration.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import {
  type ChainConfig,
  ChatDisabledError,
  ConfigError,
  configView,
  GENERAL_WORKER_AGENT,
  loadConfig,
  type ResolvedAgentConfig,
  resolveAgentConfig,
  resolveChatAgentConfig,
  resolveExecutiveSummaryConfig,
  resolveScoringConfig,
  resolveSubAgentConfig,
  resolveSynthesisConfig,
  type StageAgentConfig,
  type TarsyConfig,
  UnknownReferenceError,
} from "../src/index.ts";
import { configDir, load, loadIssues } from "./helpers.ts";

const PROVIDERS = `llm_providers:
  base-google: { type: google, model: gemini-2.5-pro }
  chain-openai: { type: openai, model: gpt-5 }
  ref-anthropic: { type: anthropic, model: claude-sonnet-4-20250514 }
  fallback-anthropic: { type: anthropic, model: claude-sonnet-4-20250514 }
`;

const TARSY = `defaults:
  llm_provider: base-google
  max_iterations: 11
  alert_type: plain
  fallback_providers: [{ provider: fallback-anthropic, backend: langchain }]
  orchestrator:
    max_concurrent_agents: 4
    agent_timeout: 20m
mcp_servers:
  loki: { transport: { type: stdio, command: loki } }
  prom: { transport: { type: stdio, command: prom } }
  k8s: { transport: { type: stdio, command: k8s } }
agents:
  LogAnalyzer:
    description: Finds error patterns in logs
    mcp_servers: [loki]
    max_iterations: 7
    llm_backend: langchain
    native_tools: { url_context: true, google_search: true, code_execution: false }
  MetricChecker:
    description: Checks metrics for anomalies
    mcp_servers: [prom]
  Undescribed:
    mcp_servers: [k8s]
  Lead:
    description: Leads an investigation
    mcp_servers: [k8s]
    sub_agents: [LogAnalyzer]
    orchestrator:
      max_concurrent_agents: 2
      max_budget: 30m
  Follower:
    mcp_servers: [k8s]
agent_chains:
  plain:
    alert_types: [plain]
    stages:
      - name: s
        agents: [Follower]
  agent-level:
    alert_types: [agent-level]
    stages:
      - name: s
        agents: [Lead]
  chain-level:
    alert_types: [chain-level]
    llm_provider: chain-openai
    llm_backend: langchain
    fallback_providers: []
    sub_agents: [MetricChecker]
    stages:
      - name: by-chain
        agents: [Lead, Follower]
      - name: by-stage
        sub_agents:
          - LogAnalyzer
          - { name: MetricChecker, max_iterations: 3 }
        agents:
          - name: Lead
          - name: Follower
            fallback_providers: [{ provider: ref-anthropic, backend: langchain }]
            sub_agents:
              - name: LogAnalyzer
                llm_provider: ref-anthropic
                mcp_servers: [prom]
              - GeneralWorker
              - Undescribed
    chat:
      enabled: true
  chat-level:
    alert_types: [chat-level]
    sub_agents: [MetricChecker]
    stages:
      - name: s
        agents: [Follower]
    chat:
      sub_agents: [LogAnalyzer, GeneralWorker]
  chat-off:
    alert_types: [chat-off]
    sub_agents: [MetricChecker]
    stages:
      - name: s
        agents: [Follower]
    chat:
      enabled: false
`;

function loaded(tarsy = TARSY, skills: Record<string, string> = {}) {
  const dir = configDir({ tarsy, providers: PROVIDERS });
  for (const [name, description] of Object.entries(skills)) {
    mkdirSync(join(dir, "skills", name), { recursive: true });
    writeFileSync(
      join(dir, "skills", name, "SKILL.md"),
      `---\nname: ${name}\ndescription: ${description}\n---\n\n${name.toUpperCase()}-BODY\n`,
    );
  }
  return { ...loadConfig({ configDir: dir, env: {} }), dir };
}

function chainOf(config: TarsyConfig, id: string): ChainConfig {
  const chain = config.chains.get(id);
  if (!chain) throw new Error(`chain ${id} missing`);
  return chain;
}

function refAt(chain: ChainConfig, stage: number, agent: number): StageAgentConfig {
  const ref = chain.stages[stage]?.agents[agent];
  if (!ref) throw new Error(`no agent ${agent} in stage ${stage}`);
  return ref;
}

const names = (resolved: ResolvedAgentConfig) => resolved.sub_agents.map((s) => s.name);

describe("sub_agents in YAML", () => {
  it("reads short and long form, mixed in one list, at every level", () => {
    const { config } = loaded();
    const chain = chainOf(config, "chain-level");
    expect(config.agents.get("Lead")?.sub_agents).toEqual([{ name: "LogAnalyzer" }]);
    expect(chain.sub_agents).toEqual([{ name: "MetricChecker" }]);
    expect(chain.stages[1]?.sub_agents).toEqual([
      { name: "LogAnalyzer" },
      { name: "MetricChecker", max_iterations: 3 },
    ]);
    expect(refAt(chain, 1, 1).sub_agents).toEqual([
      { name: "LogAnalyzer", llm_provider: "ref-anthropic", mcp_servers: ["prom"] },
      { name: "GeneralWorker" },
      { name: "Undescribed" },
    ]);
    expect(chainOf(config, "chat-level").chat.sub_agents).toEqual([
      { name: "LogAnalyzer" },
      { name: "GeneralWorker" },
    ]);
  });

  it("loads them without an ignored or unsupported warning", () => {
    const { warnings } = loaded();
    expect(warnings.filter((w) => w.unsupported)).toEqual([]);
    expect(warnings.filter((w) => w.message.includes("ignored"))).toEqual([]);
  });

  it("reports a malformed entry and an unknown key of a reference where they are", () => {
    const issues = loadIssues({
      tarsy: `agents:
  Lead:
    mcp_servers: []
    sub_agents: [GeneralWorker, 42, { llm_provider: x }, { name: GeneralWorker, max_iterations: 0 }]
`,
    });
    expect(issues.map((i) => i.path)).toEqual([
      "agents.Lead.sub_agents[1]",
      "agents.Lead.sub_agents[2].name",
      "agents.Lead.sub_agents[3].max_iterations",
    ]);
    const { warnings } = load({
      tarsy: `agents:
  Lead:
    mcp_servers: []
    sub_agents: [{ name: GeneralWorker, timeout: 5m }]
`,
    });
    expect(warnings).toContainEqual(
      expect.objectContaining({
        path: "agents.Lead.sub_agents[0].timeout",
        message: '"timeout" is not a known setting; ignored',
      }),
    );
  });
});

describe("which sub_agents list an execution gets (first non-empty wins)", () => {
  it("a plain agent has no catalog: no orchestration", () => {
    const { config } = loaded();
    const chain = chainOf(config, "plain");
    expect(resolveAgentConfig(config, chain, 0, refAt(chain, 0, 0)).sub_agents).toEqual([]);
  });

  it("the agent definition's list when no other level has one", () => {
    const { config } = loaded();
    const chain = chainOf(config, "agent-level");
    const lead = resolveAgentConfig(config, chain, 0, refAt(chain, 0, 0));
    expect(lead.sub_agents).toEqual([
      {
        name: "LogAnalyzer",
        description: "Finds error patterns in logs",
        mcp_servers: ["loki"],
        native_tools: ["google_search", "url_context"],
        ref: { name: "LogAnalyzer" },
      },
    ]);
  });

  it("the chain's list wins over the agent definition's", () => {
    const { config } = loaded();
    const chain = chainOf(config, "chain-level");
    expect(names(resolveAgentConfig(config, chain, 0, refAt(chain, 0, 0)))).toEqual([
      "MetricChecker",
    ]);
    expect(names(resolveAgentConfig(config, chain, 0, refAt(chain, 0, 1)))).toEqual([
      "MetricChecker",
    ]);
  });

  it("the stage's list wins over the chain's", () => {
    const { config } = loaded();
    const chain = chainOf(config, "chain-level");
    const lead = resolveAgentConfig(config, chain, 1, refAt(chain, 1, 0));
    expect(names(lead)).toEqual(["LogAnalyzer", "MetricChecker"]);
    expect(lead.sub_agents[1]?.ref).toEqual({ name: "MetricChecker", max_iterations: 3 });
  });

  it("the stage agent's list wins over the stage's; the catalog shows servers as they run", () => {
    const { config } = loaded();
    const chain = chainOf(config, "chain-level");
    const follower = resolveAgentConfig(config, chain, 1, refAt(chain, 1, 1));
    // Undescribed is left out of the catalog.
    expect(names(follower)).toEqual(["LogAnalyzer", GENERAL_WORKER_AGENT]);
    expect(follower.sub_agents[0]?.mcp_servers).toEqual(["prom"]);
    expect(follower.sub_agents[1]).toMatchObject({
      description: "General-purpose worker for analysis, summarization and reasoning; no tools",
      mcp_servers: [],
      native_tools: [],
    });
  });

  it("chat: chat.sub_agents wins over the chain's, which is the fallback", () => {
    const { config } = loaded();
    expect(names(resolveChatAgentConfig(config, chainOf(config, "chat-level")))).toEqual([
      "LogAnalyzer",
      GENERAL_WORKER_AGENT,
    ]);
    expect(names(resolveChatAgentConfig(config, chainOf(config, "chain-level")))).toEqual([
      "MetricChecker",
    ]);
    expect(resolveChatAgentConfig(config, chainOf(config, "plain")).sub_agents).toEqual([]);
  });

  it("synthesis, the executive summary and the judge never get sub-agents", () => {
    const { config } = loaded();
    const chain = chainOf(config, "chain-level");
    expect(resolveSynthesisConfig(config, chain, 0).sub_agents).toEqual([]);
    expect(resolveScoringConfig(config, chain).sub_agents).toEqual([]);
    expect(resolveExecutiveSummaryConfig(config, chain)).not.toHaveProperty("sub_agents");
  });
});

describe("catalog problems at load", () => {
  it("an agent without a description is left out of the catalog, with a warning", () => {
    const { warnings, dir } = loaded();
    expect(warnings).toContainEqual({
      file: join(dir, "tarsy.yaml"),
      path: "agent_chains.chain-level.stages[1].agents[1].sub_agents[2]",
      message:
        'agent "Undescribed" has no description: it is left out of the sub-agent catalog (an orchestrating agent picks sub-agents by their description)',
    });
  });

  it("an unknown agent is an error naming the file, the path and the line", () => {
    const tarsy = `agents:
  Lead:
    mcp_servers: []
    sub_agents: [GeneralWorker]
agent_chains:
  c:
    alert_types: [c]
    stages:
      - name: s
        agents:
          - name: Lead
            sub_agents:
              - GeneralWorker
              - { name: Nobody, max_iterations: 2 }
    chat:
      sub_agents: [Ghost]
`;
    expect(loadIssues({ tarsy })).toEqual([
      {
        file: "tarsy.yaml",
        path: "agent_chains.c.stages[0].agents[0].sub_agents[1]",
        message: 'unknown agent "Nobody" in sub_agents',
        line: 14,
      },
      {
        file: "tarsy.yaml",
        path: "agent_chains.c.chat.sub_agents[0]",
        message: 'unknown agent "Ghost" in sub_agents',
        line: 16,
      },
    ]);
    const dir = configDir({ tarsy });
    let error: unknown;
    try {
      loadConfig({ configDir: dir, env: {} });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain(
      `${dir}/tarsy.yaml:14: agent_chains.c.stages[0].agents[0].sub_agents[1]: unknown agent "Nobody" in sub_agents`,
    );
  });

  it("a reference's provider, servers and skills must exist", () => {
    const issues = loadIssues({
      tarsy: `agents:
  Lead:
    mcp_servers: []
    sub_agents: [{ name: GeneralWorker, llm_provider: nope, mcp_servers: [gone], skills: [missing] }]
`,
    });
    expect(issues.map((i) => [i.path, i.message.split(" (")[0]])).toEqual([
      ["agents.Lead.sub_agents[0].llm_provider", 'unknown LLM provider "nope"'],
      ["agents.Lead.sub_agents[0].mcp_servers[0]", 'unknown MCP server "gone"'],
      ["agents.Lead.sub_agents[0].skills[0]", 'unknown skill "missing"'],
    ]);
  });
});

describe("orchestrator guardrails", () => {
  it("default to 5 at once, no agent timeout and no total budget", () => {
    const { config } = load({}, { GOOGLE_API_KEY: "k" });
    const chain = chainOf(config, "kubernetes-agent-chain");
    expect(resolveAgentConfig(config, chain, 0, refAt(chain, 0, 0)).orchestrator).toEqual({
      max_concurrent_agents: 5,
    });
  });

  it("defaults.orchestrator, then the agent definition's block, key by key", () => {
    const { config } = loaded();
    expect(config.defaults.orchestrator).toEqual({
      max_concurrent_agents: 4,
      agent_timeout_ms: 20 * 60_000,
    });
    const chain = chainOf(config, "chain-level");
    expect(resolveAgentConfig(config, chain, 0, refAt(chain, 0, 0)).orchestrator).toEqual({
      max_concurrent_agents: 2,
      agent_timeout_ms: 20 * 60_000,
      max_budget_ms: 30 * 60_000,
    });
    expect(resolveAgentConfig(config, chain, 0, refAt(chain, 0, 1)).orchestrator).toEqual({
      max_concurrent_agents: 4,
      agent_timeout_ms: 20 * 60_000,
    });
  });

  it("rejects a zero or malformed duration and a count below 1", () => {
    const issues = loadIssues({
      tarsy: `defaults:
  orchestrator: { max_concurrent_agents: 0, agent_timeout: 0 }
agents:
  Lead:
    mcp_servers: []
    orchestrator: { max_budget: soon }
`,
    });
    expect(issues.map((i) => i.path)).toEqual([
      "defaults.orchestrator.max_concurrent_agents",
      "defaults.orchestrator.agent_timeout",
      "agents.Lead.orchestrator.max_budget",
    ]);
  });

  it("are shown for each agent in the configuration view, with its sub_agents", () => {
    const { config } = loaded();
    const view = configView(config);
    expect(view.defaults.orchestrator).toEqual({
      max_concurrent_agents: 4,
      agent_timeout_ms: 20 * 60_000,
      max_budget_ms: null,
    });
    expect(view.agents.find((a) => a.name === "Lead")).toMatchObject({
      sub_agents: ["LogAnalyzer"],
      orchestrator: {
        max_concurrent_agents: 2,
        agent_timeout_ms: 20 * 60_000,
        max_budget_ms: 30 * 60_000,
      },
    });
    expect(view.agents.find((a) => a.name === "Follower")).toMatchObject({ sub_agents: [] });
    const chain = view.chains.find((c) => c.id === "chain-level");
    expect(chain?.sub_agents).toEqual(["MetricChecker"]);
    expect(chain?.chat_sub_agents).toEqual(["MetricChecker"]);
    expect(chain?.stages[1]?.sub_agents).toEqual({
      Lead: ["LogAnalyzer", "MetricChecker"],
      Follower: ["LogAnalyzer", GENERAL_WORKER_AGENT],
    });
  });
});

describe("a sub-agent's own configuration", () => {
  const stageParent = (chain: ChainConfig, stage: number, agent: number) => ({
    kind: "stage" as const,
    stageIndex: stage,
    agentRef: refAt(chain, stage, agent),
  });

  it("takes the agent definition, then the chain, then defaults where the reference is silent", () => {
    const { config } = loaded();
    const chain = chainOf(config, "chain-level");
    const metric = resolveSubAgentConfig(config, chain, stageParent(chain, 1, 0), "MetricChecker");
    expect(metric).toMatchObject({
      agent_name: "MetricChecker",
      // provider: chain → defaults
      llm_provider_name: "chain-openai",
      // backend: agent (unset) → chain
      llm_backend: "langchain",
      // max_iterations: the stage's reference
      max_iterations: 3,
      mcp_servers: ["prom"],
      // the chain's fallback list ([]: none), over the defaults'
      fallback_providers: [],
      // depth 1: a sub-agent dispatches nothing
      sub_agents: [],
      orchestrator: { max_concurrent_agents: 4, agent_timeout_ms: 20 * 60_000 },
    });
    const log = resolveSubAgentConfig(config, chain, stageParent(chain, 1, 0), "LogAnalyzer");
    // the agent's max_iterations and backend when the reference sets none
    expect(log).toMatchObject({
      max_iterations: 7,
      llm_backend: "langchain",
      mcp_servers: ["loki"],
    });
  });

  it("the reference's provider, backend, max_iterations and servers win", () => {
    const { config } = loaded();
    const chain = chainOf(config, "chain-level");
    const log = resolveSubAgentConfig(config, chain, stageParent(chain, 1, 1), "LogAnalyzer");
    expect(log).toMatchObject({
      agent_name: "LogAnalyzer",
      llm_provider_name: "ref-anthropic",
      mcp_servers: ["prom"],
      sub_agents: [],
    });
    // the parent stage agent's own fallback list does not reach its sub-agents
    expect(log.fallback_providers).toEqual([]);
    const { config: other } = loaded(`defaults:
  llm_provider: base-google
  alert_type: c
  fallback_providers: [{ provider: fallback-anthropic, backend: langchain }]
agents:
  Lead:
    mcp_servers: []
    max_iterations: 30
    sub_agents:
      - { name: GeneralWorker, llm_backend: langchain, max_iterations: 4 }
      - GeneralWorker
agent_chains:
  c:
    alert_types: [c]
    stages:
      - name: s
        agents: [{ name: Lead, fallback_providers: [] }]
`);
    const c = chainOf(other, "c");
    const worker = resolveSubAgentConfig(other, c, stageParent(c, 0, 0), GENERAL_WORKER_AGENT);
    expect(worker).toMatchObject({
      llm_provider_name: "base-google",
      llm_backend: "langchain",
      max_iterations: 4,
      mcp_servers: [],
    });
    expect(worker.fallback_providers.map((f) => f.provider_name)).toEqual(["fallback-anthropic"]);
  });

  it("adds the reference's skills to the agent definition's", () => {
    const { config } = loaded(
      `defaults:
  llm_provider: base-google
  alert_type: c
agents:
  Worker:
    description: does work
    mcp_servers: []
    skills: [kubectl, oom]
    required_skills: [kubectl]
  Lead:
    mcp_servers: []
    required_skills: [escalation]
    sub_agents:
      - { name: Worker, skills: [escalation], required_skills: [oom, kubectl] }
agent_chains:
  c:
    alert_types: [c]
    stages:
      - name: s
        agents: [Lead]
`,
      {
        kubectl: "kubectl know-how",
        oom: "OOM triage",
        escalation: "who to page",
        unrelated: "not offered",
      },
    );
    const chain = chainOf(config, "c");
    const worker = resolveSubAgentConfig(config, chain, stageParent(chain, 0, 0), "Worker");
    expect(worker.required_skills.map((s) => s.name)).toEqual(["kubectl", "oom"]);
    expect(worker.on_demand_skills.map((s) => s.name)).toEqual(["escalation"]);
  });

  it("for a chat parent, looks the reference up in the chat's catalog", () => {
    const { config } = loaded();
    const chain = chainOf(config, "chat-level");
    const worker = resolveSubAgentConfig(config, chain, { kind: "chat" }, GENERAL_WORKER_AGENT);
    expect(worker).toMatchObject({ agent_name: GENERAL_WORKER_AGENT, mcp_servers: [] });
    expect(() => resolveSubAgentConfig(config, chain, { kind: "chat" }, "MetricChecker")).toThrow(
      UnknownReferenceError,
    );
    expect(() =>
      resolveSubAgentConfig(config, chainOf(config, "chat-off"), { kind: "chat" }, "MetricChecker"),
    ).toThrow(ChatDisabledError);
  });

  it("throws for an agent that is not in the parent's catalog", () => {
    const { config } = loaded();
    const chain = chainOf(config, "chain-level");
    const parent = stageParent(chain, 1, 1);
    for (const name of ["MetricChecker", "Undescribed", "NoSuchAgent"]) {
      expect(() => resolveSubAgentConfig(config, chain, parent, name)).toThrow(
        UnknownReferenceError,
      );
    }
    expect(() => resolveSubAgentConfig(config, chain, parent, "Undescribed")).toThrow(
      'chain "chain-level" stage "by-stage" agent "Follower" sub-agents: unknown agent "Undescribed"',
    );
  });
});

describe("GeneralWorker", () => {
  it("is a built-in agent with a description and no MCP servers", () => {
    const { config } = load({}, { GOOGLE_API_KEY: "k" });
    expect(config.agents.get(GENERAL_WORKER_AGENT)).toMatchObject({
      name: "GeneralWorker",
      description: "General-purpose worker for analysis, summarization and reasoning; no tools",
      mcp_servers: [],
      builtin: true,
    });
  });
});

describe("the example tarsy.yaml", () => {
  it("documents an orchestrator that loads once uncommented", () => {
    const examples = resolve(import.meta.dirname, "../../../deploy/config");
    const lines = readFileSync(join(examples, "tarsy.yaml.example"), "utf8").split("\n");
    /** Uncomments the commented block that starts with `  # <key>:` (up to a blank line). */
    const uncomment = (key: string) => {
      const start = lines.findIndex((line) => line.startsWith(`  # ${key}:`));
      expect(start).toBeGreaterThan(0);
      for (let i = start; i < lines.length && lines[i]?.startsWith("  #"); i++) {
        lines[i] = `  ${lines[i]?.slice(4)}`;
      }
    };
    uncomment("orchestrator");
    uncomment("incident-lead");
    const dir = configDir({ tarsy: lines.join("\n") });
    copyFileSync(join(examples, "llm-providers.yaml.example"), join(dir, "llm-providers.yaml"));
    const { config, warnings } = loadConfig({
      configDir: dir,
      env: {
        GOOGLE_API_KEY: "k",
        MONITORING_TOKEN: "t",
        MONITORING_STS_CLIENT_SECRET: "s",
        KUBECONFIG: "/etc/kube/config",
      },
    });
    expect(warnings).toEqual([]);
    const lead = config.agents.get("incident-lead");
    expect(lead?.sub_agents?.map((ref) => ref.name)).toEqual(["GeneralWorker", "KubernetesAgent"]);
    expect(config.defaults.orchestrator).toEqual({
      max_concurrent_agents: 5,
      agent_timeout_ms: 20 * 60_000,
      max_budget_ms: 3_600_000,
    });
    expect(configView(config).agents.find((a) => a.name === "incident-lead")?.orchestrator).toEqual(
      { max_concurrent_agents: 3, agent_timeout_ms: 10 * 60_000, max_budget_ms: 3_600_000 },
    );
  });
});

describe("the Go TARSy's full example", () => {
  it("loads its agent-level sub_agents with no ignored or unsupported warning for them", () => {
    const dir = resolve(import.meta.dirname, "go-tarsy/full");
    const { warnings } = loadConfig({ configDir: dir, env: {} });
    const aboutSubAgents = warnings.filter((w) => w.path.includes("sub_agents"));
    expect(aboutSubAgents.map((w) => w.path)).toEqual(["agents.Orchestrator.sub_agents[0]"]);
    expect(aboutSubAgents.some((w) => w.unsupported || w.message.includes("ignored"))).toBe(false);
  });
});
