import { describe, expect, it } from "vitest";
import {
  ChainNotFoundError,
  ChatDisabledError,
  isScoringEnabled,
  listAlertTypes,
  planStage,
  resolveAgentConfig,
  resolveChainForAlertType,
  resolveChatAgentConfig,
  resolveExecutiveSummaryConfig,
  resolveScoringConfig,
  resolveSuccessPolicy,
  resolveSynthesisConfig,
  UnknownReferenceError,
} from "../src/index.ts";
import { agentAt, chainOf, resolutionConfig } from "./fixtures.ts";
import { load } from "./helpers.ts";

const config = resolutionConfig();

describe("chain by alert type", () => {
  it("finds the chain that lists the alert type", () => {
    expect(resolveChainForAlertType(config, "chatty").id).toBe("chatty");
    expect(resolveChainForAlertType(config, "kubernetes").id).toBe("kubernetes-agent-chain");
  });

  it("uses defaults.alert_type for an alert without a type", () => {
    for (const missing of [undefined, null, "", "  "]) {
      expect(resolveChainForAlertType(config, missing).id).toBe("kubernetes-agent-chain");
    }
    const other = resolutionConfig("  alert_type: chatty\n");
    expect(resolveChainForAlertType(other, undefined).id).toBe("chatty");
  });

  it("rejects an alert type no chain handles", () => {
    expect(() => resolveChainForAlertType(config, "NoSuchAlert")).toThrow(ChainNotFoundError);
    expect(() => resolveChainForAlertType(config, "NoSuchAlert")).toThrow(
      'no chain handles alert type "NoSuchAlert"',
    );
  });

  it("lists every alert type for the dashboard", () => {
    expect(listAlertTypes(config)).toContain("replicated");
    expect(listAlertTypes(config)).toContain("kubernetes");
  });
});

describe("agent configuration hierarchy: defaults → agent → chain → stage → stage-agent", () => {
  it("takes everything from defaults and the agent definition when nothing else is set", () => {
    const chain = chainOf(config, "bare");
    const plain = resolveAgentConfig(config, chain, 0, agentAt(chain, 0, 0));
    expect(plain).toEqual({
      agent_name: "Plain",
      llm_provider_name: "base-google",
      llm_provider: config.llmProviders.get("base-google"),
      llm_backend: "google-native",
      max_iterations: 11,
      iteration_timeout_ms: 90_000,
      mcp_servers: ["s-agent"],
      native_tools: { google_search: true, url_context: true },
      fallback_providers: [],
      // the provider's native tools, not the agent's own: any fallback may stand in
      requires_native_tools: false,
      // no skills/ directory: no skills
      required_skills: [],
      on_demand_skills: [],
      // no sub_agents anywhere: a plain agent, with the built-in guardrails
      sub_agents: [],
      orchestrator: { max_concurrent_agents: 5 },
    });
    const tuned = resolveAgentConfig(config, chain, 0, agentAt(chain, 0, 1));
    expect(tuned).toMatchObject({
      agent_name: "Tuned",
      llm_backend: "langchain",
      max_iterations: 12,
      custom_instructions: "be tuned",
      // the agent's native tools refine the provider's
      native_tools: { google_search: true, url_context: false, code_execution: true },
    });
  });

  it("lets the chain override provider, max_iterations and MCP servers (replacing the list)", () => {
    const chain = chainOf(config, "chain-level");
    for (const index of [0, 1]) {
      expect(resolveAgentConfig(config, chain, 0, agentAt(chain, 0, index))).toMatchObject({
        llm_provider_name: "chain-openai",
        max_iterations: 13,
        mcp_servers: ["s-chain"],
        iteration_timeout_ms: 90_000,
      });
    }
    // openai with no backend set anywhere: langchain
    expect(resolveAgentConfig(config, chain, 0, agentAt(chain, 0, 0)).llm_backend).toBe(
      "langchain",
    );
  });

  it("lets the stage override max_iterations and the iteration timeout", () => {
    const chain = chainOf(config, "chain-level");
    expect(resolveAgentConfig(config, chain, 1, agentAt(chain, 1, 0))).toMatchObject({
      llm_provider_name: "chain-openai",
      max_iterations: 14,
      iteration_timeout_ms: 45_000,
      mcp_servers: ["s-chain"],
    });
  });

  it("lets the stage agent override provider, max_iterations and MCP servers last", () => {
    const chain = chainOf(config, "chain-level");
    expect(resolveAgentConfig(config, chain, 1, agentAt(chain, 1, 1))).toMatchObject({
      agent_name: "Tuned",
      llm_provider_name: "agent-anthropic",
      llm_backend: "langchain",
      max_iterations: 15,
      iteration_timeout_ms: 45_000,
      mcp_servers: ["s-stage-agent"],
    });
  });

  it("resolves the backend: stage agent → chain → agent → defaults → provider type", () => {
    const chain = chainOf(config, "backend-order");
    const backend = (index: number) =>
      resolveAgentConfig(config, chain, 0, agentAt(chain, 0, index)).llm_backend;
    expect(backend(0)).toBe("google-native"); // google provider, nothing set
    expect(backend(1)).toBe("langchain"); // agent definition
    expect(backend(2)).toBe("google-native"); // stage agent beats the agent definition
    expect(backend(3)).toBe("langchain"); // TARSy strategy "react" at the stage agent

    const chainBackend = chainOf(config, "chain-backend");
    expect(
      resolveAgentConfig(config, chainBackend, 0, agentAt(chainBackend, 0, 0)).llm_backend,
    ).toBe("google-native"); // chain beats the agent definition's langchain

    const withDefault = resolutionConfig("  llm_backend: langchain\n");
    const bare = chainOf(withDefault, "backend-order");
    expect(resolveAgentConfig(withDefault, bare, 0, agentAt(bare, 0, 0)).llm_backend).toBe(
      "langchain",
    ); // defaults beat the provider type

    const canned = chainOf(config, "canned-chain");
    expect(resolveAgentConfig(config, canned, 0, agentAt(canned, 0, 0)).llm_backend).toBe(
      "scripted",
    );
  });

  it("uses the 120 s iteration timeout and 40 iterations when nothing sets them", () => {
    const { config: builtins } = load({});
    const chain = chainOf(builtins, "kubernetes-agent-chain");
    expect(resolveAgentConfig(builtins, chain, 0, agentAt(chain, 0, 0))).toMatchObject({
      agent_name: "KubernetesAgent",
      llm_provider_name: "google-default",
      llm_backend: "google-native",
      iteration_timeout_ms: 120_000,
      max_iterations: 40,
      mcp_servers: ["kubernetes-server"],
    });
  });

  it("throws for an unknown stage or agent", () => {
    const chain = chainOf(config, "bare");
    expect(() => resolveAgentConfig(config, chain, 5, { name: "Plain" })).toThrow(
      UnknownReferenceError,
    );
    expect(() => resolveAgentConfig(config, chain, 0, { name: "Ghost" })).toThrow(
      'chain "bare" stage "only": unknown agent "Ghost"',
    );
  });
});

describe("stage execution plans", () => {
  it("names replicas {Base}-1..N and resolves them with the base agent", () => {
    const chain = chainOf(config, "replicated");
    const plan = planStage(config, chain, 0);
    expect(plan.parallel_type).toBe("replica");
    expect(plan.needs_synthesis).toBe(true);
    expect(plan.executions.map((e) => [e.display_name, e.index, e.config.agent_name])).toEqual([
      ["Plain-1", 0, "Plain"],
      ["Plain-2", 1, "Plain"],
      ["Plain-3", 2, "Plain"],
    ]);
    expect(plan.executions.every((e) => e.config.max_iterations === 4)).toBe(true);
  });

  it("runs one execution per listed agent", () => {
    const plan = planStage(config, chainOf(config, "replicated"), 1);
    expect(plan.parallel_type).toBe("multi_agent");
    expect(plan.executions.map((e) => e.display_name)).toEqual(["Plain", "Tuned"]);
    expect(plan.needs_synthesis).toBe(true);
  });

  it("treats a single agent as N=1 without synthesis", () => {
    const plan = planStage(config, chainOf(config, "chatty"), 0);
    expect(plan.parallel_type).toBeNull();
    expect(plan.executions).toHaveLength(1);
    expect(plan.needs_synthesis).toBe(false);
  });

  it("defaults the success policy: stage → defaults.success_policy → any", () => {
    const chain = chainOf(config, "replicated");
    const [triple, pair] = chain.stages;
    if (!triple || !pair) throw new Error("stages missing");
    expect(resolveSuccessPolicy(config, triple)).toBe("all");
    expect(resolveSuccessPolicy(config, pair)).toBe("any");
    const strict = resolutionConfig("  success_policy: all\n");
    const strictPair = chainOf(strict, "replicated").stages[1];
    if (!strictPair) throw new Error("stage missing");
    expect(resolveSuccessPolicy(strict, strictPair)).toBe("all");
    expect(planStage(strict, chainOf(strict, "replicated"), 1).success_policy).toBe("all");
  });
});

describe("synthesis agent", () => {
  it("defaults to SynthesisAgent on the chain's provider with no tools", () => {
    const chain = chainOf(config, "chain-level");
    expect(resolveSynthesisConfig(config, chain, 0)).toMatchObject({
      agent_name: "SynthesisAgent",
      llm_provider_name: "chain-openai",
      llm_backend: "langchain",
      mcp_servers: [],
    });
    expect(resolveSynthesisConfig(config, chainOf(config, "bare"), 0)).toMatchObject({
      llm_provider_name: "base-google",
      llm_backend: "google-native",
    });
  });

  it("uses the stage's synthesis agent, provider and backend", () => {
    expect(resolveSynthesisConfig(config, chainOf(config, "replicated"), 1)).toMatchObject({
      agent_name: "Tuned",
      llm_provider_name: "agent-anthropic",
      llm_backend: "langchain",
      custom_instructions: "be tuned",
    });
  });
});

describe("chat agent", () => {
  it("defaults to ChatAgent with every MCP server the chain's stages use", () => {
    const chat = resolveChatAgentConfig(config, chainOf(config, "chatty"));
    expect(chat).toMatchObject({
      agent_name: "ChatAgent",
      llm_provider_name: "summary-xai",
      llm_backend: "langchain",
      max_iterations: 3,
      mcp_servers: ["s-agent", "s-stage-agent"],
      iteration_timeout_ms: 90_000,
    });
  });

  it("uses chat.mcp_servers and chat.agent when set", () => {
    expect(resolveChatAgentConfig(config, chainOf(config, "chat-servers"))).toMatchObject({
      agent_name: "Tuned",
      llm_provider_name: "base-google",
      llm_backend: "langchain",
      max_iterations: 12,
      mcp_servers: ["s-chat"],
    });
  });

  it("puts chain-level servers first in the union", () => {
    expect(resolveChatAgentConfig(config, chainOf(config, "chat-aggregate")).mcp_servers).toEqual([
      "s-chain",
      "s-stage-agent",
    ]);
  });

  it("refuses a chain whose chat is disabled", () => {
    expect(() => resolveChatAgentConfig(config, chainOf(config, "no-chat"))).toThrow(
      ChatDisabledError,
    );
  });
});

describe("executive summary provider", () => {
  it("uses executive_summary_provider → chain llm_provider → defaults", () => {
    expect(resolveExecutiveSummaryConfig(config, chainOf(config, "chatty"))).toMatchObject({
      agent_name: "ExecSummaryAgent",
      llm_provider_name: "summary-xai",
      llm_backend: "langchain",
    });
    expect(
      resolveExecutiveSummaryConfig(config, chainOf(config, "chain-level")).llm_provider_name,
    ).toBe("chain-openai");
    expect(resolveExecutiveSummaryConfig(config, chainOf(config, "bare"))).toMatchObject({
      llm_provider_name: "base-google",
      llm_backend: "google-native",
    });
  });

  it("falls back to the provider's backend when the chain's cannot drive it", () => {
    // chain-backend sets google-native but summarizes with xai
    expect(resolveExecutiveSummaryConfig(config, chainOf(config, "chain-backend"))).toMatchObject({
      llm_provider_name: "summary-xai",
      llm_backend: "langchain",
    });
  });
});

describe("scoring judge", () => {
  const judged = (tarsy: string) =>
    load(
      {
        tarsy,
        providers: `
llm_providers:
  judge-provider: { type: anthropic, model: claude-judge }
  chain-provider: { type: openai, model: gpt-chain }
`,
      },
      { GOOGLE_API_KEY: "k", ANTHROPIC_API_KEY: "k", OPENAI_API_KEY: "k" },
    ).config;
  const CHAINS = `
agent_chains:
  plain:
    alert_types: [plain]
    llm_provider: chain-provider
    stages: [{ name: s, agents: [KubernetesAgent] }]
  judged:
    alert_types: [judged]
    scoring: { enabled: true, agent: MyJudge, llm_provider: judge-provider, max_iterations: 2 }
    stages: [{ name: s, agents: [KubernetesAgent] }]
  off:
    alert_types: [off]
    scoring: { enabled: false }
    stages: [{ name: s, agents: [KubernetesAgent] }]
agents:
  MyJudge: { custom_instructions: "Be strict." }
`;

  it("is off unless the chain or defaults.scoring enables it; the chain wins", () => {
    const config = judged(`defaults:\n  scoring: { enabled: true }\n${CHAINS}`);
    const chain = (id: string) => {
      const found = config.chains.get(id);
      if (!found) throw new Error(id);
      return found;
    };
    expect(isScoringEnabled(config, chain("plain"))).toBe(true);
    expect(isScoringEnabled(config, chain("judged"))).toBe(true);
    expect(isScoringEnabled(config, chain("off"))).toBe(false);
    const noDefaults = judged(CHAINS);
    expect(isScoringEnabled(noDefaults, chain("plain"))).toBe(false);
  });

  it("resolves agent, provider and iterations: chain scoring → defaults.scoring → chain → defaults", () => {
    const config = judged(
      `defaults:\n  scoring: { agent: ScoringAgent, llm_provider: judge-provider }\n${CHAINS}`,
    );
    const plain = config.chains.get("plain");
    const mine = config.chains.get("judged");
    if (!plain || !mine) throw new Error("chains missing");
    expect(resolveScoringConfig(config, mine)).toMatchObject({
      agent_name: "MyJudge",
      llm_provider_name: "judge-provider",
      llm_backend: "langchain",
      max_iterations: 2,
      custom_instructions: "Be strict.",
    });
    expect(resolveScoringConfig(config, plain)).toMatchObject({
      agent_name: "ScoringAgent",
      llm_provider_name: "judge-provider",
    });
    const bare = judged(CHAINS);
    const bareChain = bare.chains.get("plain");
    if (!bareChain) throw new Error("chain missing");
    expect(resolveScoringConfig(bare, bareChain)).toMatchObject({
      agent_name: "ScoringAgent",
      llm_provider_name: "chain-provider",
      // The judge is told which tools the chain's agents had.
      mcp_servers: ["kubernetes-server"],
    });
  });
});
