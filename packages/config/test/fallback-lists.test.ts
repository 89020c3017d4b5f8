/** Named fallback lists (ADR-0030): the catalog, every selector site and the resolution order. */
import { describe, expect, it } from "vitest";
import {
  type ChainConfig,
  ConfigError,
  loadConfig,
  type ResolvedFallbackEntry,
  resolveAgentConfig,
  resolveChatAgentConfig,
  resolveExecutiveSummaryConfig,
  resolveScoringConfig,
  resolveSubAgentConfig,
  resolveSummarizationFallbacks,
  resolveSummarizationModel,
  resolveSynthesisConfig,
  type TarsyConfig,
} from "../src/index.ts";
import { configDir, load, loadIssues } from "./helpers.ts";

/** One OpenAI-typed provider per name, each with its own key variable (`<NAME>_KEY`). */
const NAMES = [
  "base",
  "prem-1",
  "prem-2",
  "mid-1",
  "score-1",
  "summary-1",
  "cheap",
  "cheap-1",
  "chain-1",
  "stage-1",
  "ref-1",
  "chat-1",
  "res",
  "unused-1",
];
const keyOf = (name: string) => `${name.toUpperCase().replace(/-/g, "_")}_KEY`;
const PROVIDERS = `llm_providers:\n${NAMES.map(
  (name) => `  ${name}:\n    type: openai\n    model: m-${name}\n    api_key_env: ${keyOf(name)}\n`,
).join("")}`;

const CATALOG = `
fallback_lists:
  premium:
    - llm_provider: prem-1
    - llm_provider: prem-2
      llm_backend: langchain
  mid: [{ llm_provider: mid-1 }]
  scoring-list: [{ llm_provider: score-1 }]
  summary-list: [{ llm_provider: summary-1 }]
  summarize-list: [{ llm_provider: cheap-1 }]
  chain-list: [{ llm_provider: chain-1 }]
  stage-list: [{ llm_provider: stage-1 }]
  ref-list: [{ llm_provider: ref-1 }]
  chat-list: [{ llm_provider: chat-1 }]
  none: []
  unused: [{ llm_provider: unused-1 }]
`;

const AGENTS = `
agents:
  Investigator:
    sub_agents: [Researcher, Plain, { name: Writer, fallback_list: ref-list }]
  Researcher: { description: researches }
  Writer: { description: writes }
  Plain: { description: plain }
`;

/** Every selector site set, each to its own list. */
const EVERY_SITE = `${CATALOG}${AGENTS}
defaults:
  llm_provider: base
  alert_type: c
  fallback_list: premium
  executive_summary_fallback_list: summary-list
  scoring: { fallback_list: scoring-list }
  summarization: { llm_provider: cheap, fallback_list: summarize-list }
  agents:
    Researcher: { llm_provider: res, fallback_list: mid }
agent_chains:
  c:
    alert_types: [c]
    fallback_list: chain-list
    chat: { fallback_list: chat-list }
    stages:
      - name: s1
        fallback_list: stage-list
        agents:
          - name: Investigator
          - name: Investigator
            llm_provider: prem-1
            fallback_list: ref-list
        synthesis: { fallback_list: mid }
  plain:
    alert_types: [p]
    stages: [{ name: s, agents: [Investigator] }]
`;

const names = (list: readonly ResolvedFallbackEntry[]) => list.map((e) => e.provider_name);

function chainOf(config: TarsyConfig, id: string): ChainConfig {
  const chain = config.chains.get(id);
  if (!chain) throw new Error(`chain ${id} is missing`);
  return chain;
}

function stageAgent(config: TarsyConfig, chain: ChainConfig, index: number) {
  const agentRef = chain.stages[0]?.agents[index];
  if (!agentRef) throw new Error("no such stage agent");
  return { config, chain, agentRef, resolved: resolveAgentConfig(config, chain, 0, agentRef) };
}

function subAgent(config: TarsyConfig, chain: ChainConfig, parentIndex: number, name: string) {
  const { agentRef } = stageAgent(config, chain, parentIndex);
  return resolveSubAgentConfig(config, chain, { kind: "stage", stageIndex: 0, agentRef }, name);
}

describe("the fallback_lists catalog", () => {
  it("loads name → ordered {llm_provider, llm_backend} entries (omitted backend: langchain)", () => {
    const { config, warnings } = load({ tarsy: EVERY_SITE, providers: PROVIDERS });
    expect(config.fallbackLists.get("premium")).toEqual([
      { provider: "prem-1", backend: "langchain" },
      { provider: "prem-2", backend: "langchain" },
    ]);
    expect(config.fallbackLists.get("none")).toEqual([]);
    // Nothing of it is reported as ignored or unsupported.
    expect(warnings.filter((w) => /fallback_list|summarization/.test(w.path))).toEqual([]);
  });

  it("a catalog entry written with the deprecated list's keys is an error with a hint", () => {
    const issues = loadIssues({
      tarsy: "fallback_lists:\n  mid:\n    - { provider: base, backend: langchain }\n",
      providers: PROVIDERS,
    });
    expect(issues).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          path: "fallback_lists.mid[0].provider",
          message: 'unknown key "provider": did you mean llm_provider?',
        }),
      ]),
    );
  });

  it("an entry's unknown provider or unfit backend is an error even when nobody selects the list", () => {
    const issues = loadIssues({
      tarsy: `fallback_lists:
  spare:
    - { llm_provider: nope }
    - { llm_provider: base, llm_backend: google-native }
`,
      providers: PROVIDERS,
    });
    expect(issues).toEqual([
      expect.objectContaining({
        file: "tarsy.yaml",
        path: "fallback_lists.spare[0].llm_provider",
        message: 'unknown LLM provider "nope"',
        line: 3,
      }),
      expect.objectContaining({
        path: "fallback_lists.spare[1].llm_backend",
        message: 'backend "google-native" cannot run LLM provider "base" (type openai)',
        line: 4,
      }),
    ]);
  });
});

describe("selector sites and the resolution order", () => {
  const { config } = load({ tarsy: EVERY_SITE, providers: PROVIDERS });
  const c = chainOf(config, "c");
  const plain = chainOf(config, "plain");

  it("stage agent over stage over chain over defaults", () => {
    expect(names(stageAgent(config, c, 0).resolved.fallback_providers)).toEqual(["stage-1"]);
    expect(names(stageAgent(config, c, 1).resolved.fallback_providers)).toEqual(["ref-1"]);
    expect(names(stageAgent(config, plain, 0).resolved.fallback_providers)).toEqual([
      "prem-1",
      "prem-2",
    ]);
  });

  it("synthesis: stage.synthesis.fallback_list", () => {
    expect(names(resolveSynthesisConfig(config, c, 0).fallback_providers)).toEqual(["mid-1"]);
  });

  it("chat: chain.chat.fallback_list, else the chain's, else the defaults'", () => {
    expect(names(resolveChatAgentConfig(config, c).fallback_providers)).toEqual(["chat-1"]);
    expect(names(resolveChatAgentConfig(config, plain).fallback_providers)).toEqual([
      "prem-1",
      "prem-2",
    ]);
  });

  it("scoring and the executive summary: their job lists beat the chain's and the defaults'", () => {
    expect(names(resolveScoringConfig(config, c).fallback_providers)).toEqual(["score-1"]);
    expect(names(resolveExecutiveSummaryConfig(config, c).fallback_providers)).toEqual([
      "summary-1",
    ]);
    expect(names(resolveExecutiveSummaryConfig(config, plain).fallback_providers)).toEqual([
      "summary-1",
    ]);
  });

  it("sub-agents: the reference's list, else defaults.agents.<name>, else chain — never the parent's", () => {
    // The parent (stage agent 1) runs on prem-1 with ref-list; none of that reaches its sub-agents.
    const researcher = subAgent(config, c, 1, "Researcher");
    expect(researcher.llm_provider_name).toBe("res");
    expect(names(researcher.fallback_providers)).toEqual(["mid-1"]);
    const writer = subAgent(config, c, 1, "Writer");
    expect(names(writer.fallback_providers)).toEqual(["ref-1"]);
    expect(writer.llm_provider_name).toBe("base");
    const plainSub = subAgent(config, c, 1, "Plain");
    expect(names(plainSub.fallback_providers)).toEqual(["chain-1"]);
    expect(plainSub.llm_provider_name).toBe("base");
  });

  it("defaults.agents.<name> beats the chain's list and provider for that agent", () => {
    const { config: cfg } = load({
      tarsy: `${CATALOG}${AGENTS}
defaults:
  llm_provider: base
  alert_type: k
  agents:
    Researcher: { llm_provider: res, fallback_list: mid }
agent_chains:
  k:
    alert_types: [k]
    llm_provider: prem-1
    fallback_list: premium
    stages:
      - name: s
        agents: [Researcher, { name: Researcher, fallback_list: ref-list, llm_provider: chat-1 }]
`,
      providers: PROVIDERS,
    });
    const k = chainOf(cfg, "k");
    const paired = stageAgent(cfg, k, 0).resolved;
    expect([paired.llm_provider_name, names(paired.fallback_providers)]).toEqual([
      "res",
      ["mid-1"],
    ]);
    // The stage agent that names the agent still wins.
    const own = stageAgent(cfg, k, 1).resolved;
    expect([own.llm_provider_name, names(own.fallback_providers)]).toEqual(["chat-1", ["ref-1"]]);
  });

  it("summarization: defaults.summarization's model and list; a server's own model wins", () => {
    expect(resolveSummarizationModel(config, undefined)).toMatchObject({
      llm_provider_name: "cheap",
      llm_backend: "langchain",
    });
    expect(names(resolveSummarizationFallbacks(config) ?? [])).toEqual(["cheap-1"]);
    const { config: withServer } = load({
      tarsy: `${CATALOG}
mcp_servers:
  logs:
    transport: { type: stdio, command: "true" }
    summarization: { enabled: true, llm_provider: mid-1 }
`,
      providers: PROVIDERS,
    });
    expect(resolveSummarizationModel(withServer, "logs")?.llm_provider_name).toBe("mid-1");
    // Unset everywhere: the calling agent's model and list.
    expect(resolveSummarizationModel(withServer, undefined)).toBeUndefined();
    expect(resolveSummarizationFallbacks(withServer)).toBeUndefined();
  });
});

describe("the executive summary's pairing, nested as the Go TARSy now writes it", () => {
  it("executive_summary: {llm_provider, llm_backend, fallback_list} on defaults and a chain", () => {
    const { config, warnings } = load({
      tarsy: `${CATALOG}
defaults:
  llm_provider: base
  alert_type: k
  executive_summary: { llm_provider: summary-1, fallback_list: mid }
agent_chains:
  k:
    alert_types: [k]
    executive_summary: { fallback_list: chat-list }
    stages: [{ name: s, agents: [KubernetesAgent] }]
  j:
    alert_types: [j]
    stages: [{ name: s, agents: [KubernetesAgent] }]
`,
      providers: PROVIDERS,
    });
    expect(warnings.filter((w) => w.path.includes("executive_summary"))).toEqual([]);
    const k = resolveExecutiveSummaryConfig(config, chainOf(config, "k"));
    expect([k.llm_provider_name, names(k.fallback_providers)]).toEqual(["summary-1", ["chat-1"]]);
    const j = resolveExecutiveSummaryConfig(config, chainOf(config, "j"));
    expect([j.llm_provider_name, names(j.fallback_providers)]).toEqual(["summary-1", ["mid-1"]]);
  });

  it("both spellings on one node, or an unknown list in the block, are errors with lines", () => {
    const issues = loadIssues({
      tarsy: `${CATALOG}
defaults:
  executive_summary: { fallback_list: mid }
  executive_summary_provider: base
agent_chains:
  k:
    alert_types: [k]
    executive_summary: { fallback_list: nope }
    stages: [{ name: s, agents: [KubernetesAgent] }]
`,
      providers: PROVIDERS,
    });
    expect(issues).toEqual([
      expect.objectContaining({
        path: "defaults.executive_summary",
        message: expect.stringMatching(/^set either executive_summary or /),
        line: 19,
      }),
      expect.objectContaining({
        path: "agent_chains.k.executive_summary.fallback_list",
        message: expect.stringMatching(/^unknown fallback list "nope"/),
        line: 24,
      }),
    ]);
  });
});

describe("side paths and lists that must not leak", () => {
  const { config } = load({
    tarsy: `${CATALOG}${AGENTS}
defaults:
  llm_provider: base
  alert_type: k
  fallback_list: premium
agent_chains:
  k:
    alert_types: [k]
    stages:
      - name: s
        fallback_list: stage-list
        agents: [{ name: Investigator, fallback_list: ref-list }]
`,
    providers: PROVIDERS,
  });
  const k = chainOf(config, "k");

  it("a stage's list reaches neither chat, scoring nor the executive summary", () => {
    expect(names(stageAgent(config, k, 0).resolved.fallback_providers)).toEqual(["ref-1"]);
    for (const list of [
      resolveChatAgentConfig(config, k).fallback_providers,
      resolveScoringConfig(config, k).fallback_providers,
      resolveExecutiveSummaryConfig(config, k).fallback_providers,
    ]) {
      expect(names(list)).toEqual(["prem-1", "prem-2"]);
    }
  });

  it("a parent's stage and stage-agent lists do not reach its sub-agents", () => {
    expect(names(subAgent(config, k, 0, "Researcher").fallback_providers)).toEqual([
      "prem-1",
      "prem-2",
    ]);
  });
});

describe("load errors and warnings", () => {
  it("fallback_list and fallback_providers on one level is an error with file, path and line", () => {
    const issues = loadIssues({
      tarsy: `${CATALOG}
defaults:
  fallback_list: premium
  fallback_providers: [{ provider: base }]
agent_chains:
  k:
    alert_types: [kubernetes]
    stages:
      - name: s
        agents:
          - name: KubernetesAgent
            fallback_list: mid
            fallback_providers: []
`,
      providers: PROVIDERS,
    });
    const message =
      "set either fallback_list or the deprecated fallback_providers on one level, not both";
    expect(issues).toEqual([
      { file: "tarsy.yaml", path: "defaults.fallback_list", message, line: 19 },
      {
        file: "tarsy.yaml",
        path: "agent_chains.k.stages[0].agents[0].fallback_list",
        message,
        line: 28,
      },
    ]);
  });

  it("an unknown list name is an error with file, path and line", () => {
    const issues = loadIssues({
      tarsy: `${CATALOG}
agent_chains:
  k:
    alert_types: [k]
    stages:
      - name: s
        agents: [KubernetesAgent]
        synthesis: { fallback_list: premiun }
`,
      providers: PROVIDERS,
    });
    expect(issues).toEqual([
      {
        file: "tarsy.yaml",
        path: "agent_chains.k.stages[0].synthesis.fallback_list",
        message: expect.stringMatching(
          /^unknown fallback list "premiun" \(fallback_lists has "premium", /,
        ),
        line: 24,
      },
    ]);
  });

  it("fallback_providers still works, with a deprecation warning at each place", () => {
    const { config, warnings, dir } = load({
      tarsy: `
defaults:
  fallback_providers: [{ provider: mid-1 }]
`,
      providers: PROVIDERS,
    });
    const chain = chainOf(config, "kubernetes-agent-chain");
    expect(names(stageAgent(config, chain, 0).resolved.fallback_providers)).toEqual(["mid-1"]);
    expect(warnings).toContainEqual({
      file: `${dir}/tarsy.yaml`,
      path: "defaults.fallback_providers",
      message:
        "fallback_providers is deprecated: name a list of the fallback_lists catalog with fallback_list instead",
    });
  });

  it("credentials are required for lists something selects, not for spare ones", () => {
    const dir = configDir({ tarsy: EVERY_SITE, providers: PROVIDERS });
    const all = Object.fromEntries(NAMES.map((name) => [keyOf(name), "k"]));
    const { UNUSED_1_KEY: _spare, ...withoutSpare } = all;
    // `unused` is selected nowhere: its provider's key may be missing.
    expect(() =>
      loadConfig({ configDir: dir, env: {}, credentialEnv: withoutSpare }),
    ).not.toThrow();
    // A selected list's provider without its key stops the load.
    const { MID_1_KEY: _mid, ...withoutMid } = all;
    let error: unknown;
    try {
      loadConfig({ configDir: dir, env: {}, credentialEnv: withoutMid });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues).toEqual([
      expect.objectContaining({
        path: "llm_providers.mid-1.api_key_env",
        message: expect.stringContaining("MID_1_KEY is not set"),
      }),
    ]);
  });

  it("defaults.agents naming an unknown agent is an error", () => {
    const issues = loadIssues({
      tarsy: "defaults:\n  agents:\n    Nobody: { llm_provider: base }\n",
      providers: PROVIDERS,
    });
    expect(issues).toEqual([
      expect.objectContaining({
        path: "defaults.agents.Nobody",
        message: 'unknown agent "Nobody"',
      }),
    ]);
  });
});
