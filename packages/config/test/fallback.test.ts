import { describe, expect, it } from "vitest";
import {
  ConfigError,
  loadConfig,
  resolveAgentConfig,
  resolveChatAgentConfig,
  resolveExecutiveSummaryConfig,
  resolveSynthesisConfig,
} from "../src/index.ts";
import { configDir, load, loadIssues, withoutLines } from "./helpers.ts";

const PROVIDERS = `
llm_providers:
  backup-openai:
    type: openai
    model: gpt-backup
    api_key_env: BACKUP_OPENAI_KEY
    initial_response_timeout: 45s
    stall_timeout: 20s
  backup-claude:
    type: anthropic
    model: claude-backup
    api_key_env: BACKUP_CLAUDE_KEY
  backup-gemini:
    type: google
    model: gemini-backup
    api_key_env: BACKUP_GEMINI_KEY
`;

/** Lists at every level, in TARSy's format; each level names a different first entry. */
const TARSY = `
defaults:
  fallback_providers:
    - { provider: backup-gemini, backend: google-native }
agents:
  Searcher:
    native_tools: { google_search: true }
agent_chains:
  with-lists:
    alert_types: [a]
    fallback_providers:
      - { provider: backup-claude, backend: langchain }
    stages:
      - name: chain-level
        agents: [KubernetesAgent]
      - name: stage-level
        fallback_providers:
          - { provider: backup-openai, backend: langchain }
        agents:
          - KubernetesAgent
          - name: KubernetesAgent
            fallback_providers:
              - { provider: backup-gemini, backend: google-native }
              - { provider: backup-openai, backend: langchain }
          - name: Searcher
      - name: disabled
        fallback_providers: []
        agents: [KubernetesAgent]
  defaults-only:
    alert_types: [b]
    stages:
      - name: s
        agents: [KubernetesAgent]
`;

const names = (list: { provider_name: string; backend: string }[]) =>
  list.map((e) => `${e.provider_name}/${e.backend}`);

describe("fallback_providers: the most specific list wins", () => {
  const { config } = load({ tarsy: TARSY, providers: PROVIDERS });
  const chain = config.chains.get("with-lists");
  const plain = config.chains.get("defaults-only");
  if (!chain || !plain) throw new Error("chains missing");
  const stage = chain.stages[1];
  if (!stage) throw new Error("stage missing");

  it("stage agent → stage → chain → defaults", () => {
    const agent = (stageIndex: number, agentIndex: number) => {
      const ref = chain.stages[stageIndex]?.agents[agentIndex];
      if (!ref) throw new Error("no such agent");
      return names(resolveAgentConfig(config, chain, stageIndex, ref).fallback_providers);
    };
    expect(agent(0, 0)).toEqual(["backup-claude/langchain"]);
    expect(agent(1, 0)).toEqual(["backup-openai/langchain"]);
    expect(agent(1, 1)).toEqual(["backup-gemini/google-native", "backup-openai/langchain"]);
    const ref = plain.stages[0]?.agents[0];
    if (!ref) throw new Error("no agent");
    expect(names(resolveAgentConfig(config, plain, 0, ref).fallback_providers)).toEqual([
      "backup-gemini/google-native",
    ]);
  });

  it("`[]` turns fallback off below a level that has a list", () => {
    const ref = chain.stages[2]?.agents[0];
    if (!ref) throw new Error("no agent");
    expect(resolveAgentConfig(config, chain, 2, ref).fallback_providers).toEqual([]);
  });

  it("synthesis uses its stage's list; chat and the executive summary the chain's", () => {
    expect(names(resolveSynthesisConfig(config, chain, 1).fallback_providers)).toEqual([
      "backup-openai/langchain",
    ]);
    expect(names(resolveChatAgentConfig(config, chain).fallback_providers)).toEqual([
      "backup-claude/langchain",
    ]);
    expect(names(resolveExecutiveSummaryConfig(config, chain).fallback_providers)).toEqual([
      "backup-claude/langchain",
    ]);
    expect(names(resolveExecutiveSummaryConfig(config, plain).fallback_providers)).toEqual([
      "backup-gemini/google-native",
    ]);
  });

  it("an agent whose definition enables native tools requires them; a google-native entry gets them", () => {
    const searcher = stage.agents[2];
    if (!searcher) throw new Error("no searcher");
    const resolved = resolveAgentConfig(config, chain, 1, searcher);
    expect(resolved.requires_native_tools).toBe(true);
    const k8s = stage.agents[1];
    if (!k8s) throw new Error("no agent");
    const other = resolveAgentConfig(config, chain, 1, k8s);
    expect(other.requires_native_tools).toBe(false);
    const searchOnGemini = resolveAgentConfig(config, plain, 0, {
      name: "Searcher",
    }).fallback_providers[0];
    expect(searchOnGemini?.native_tools).toMatchObject({ google_search: true });
  });

  it("warns when an agent that needs native tools has no google-native entry to fall back to", () => {
    const { warnings } = load({
      providers: PROVIDERS,
      tarsy: `
agents:
  Searcher:
    native_tools: { google_search: true }
agent_chains:
  c:
    alert_types: [c]
    fallback_providers:
      - { provider: backup-claude, backend: langchain }
    stages:
      - name: s
        agents: [Searcher, KubernetesAgent]
`,
    });
    expect(warnings.map((w) => [w.path, w.message])).toContainEqual([
      "agent_chains.c.stages[0].agents[0]",
      'agent "Searcher" needs Gemini native tools, but no entry of its fallback_providers uses the google-native backend: it cannot fall back',
    ]);
    expect(warnings.filter((w) => w.message.includes("native tools"))).toHaveLength(1);
    // With a google-native entry in its list, no warning.
    const ok = load({
      providers: PROVIDERS,
      tarsy: `
agents:
  Searcher:
    native_tools: { google_search: true }
agent_chains:
  c:
    alert_types: [c]
    fallback_providers:
      - { provider: backup-claude, backend: langchain }
      - { provider: backup-gemini, backend: google-native }
    stages:
      - name: s
        agents: [Searcher]
`,
    }).warnings;
    expect(ok.filter((w) => w.message.includes("native tools"))).toEqual([]);
  });

  it("per-provider first-chunk and stall timeouts", () => {
    expect(config.llmProviders.get("backup-openai")).toMatchObject({
      initial_response_timeout_ms: 45_000,
      stall_timeout_ms: 20_000,
    });
    expect(config.llmProviders.get("backup-claude")?.initial_response_timeout_ms).toBeUndefined();
  });
});

describe("fallback_providers: validation", () => {
  it("rejects unknown providers, unknown backends and backends that cannot drive the provider", () => {
    const issues = withoutLines(
      loadIssues({
        providers: PROVIDERS,
        tarsy: `
defaults:
  fallback_providers:
    - { provider: no-such-provider, backend: langchain }
agent_chains:
  c:
    alert_types: [c]
    fallback_providers:
      - { provider: backup-claude, backend: google-native }
    stages:
      - name: s
        agents:
          - name: KubernetesAgent
            fallback_providers:
              - { provider: backup-openai, backend: langchain }
  d:
    alert_types: [d]
    stages:
      - name: s
        agents:
          - name: KubernetesAgent
            fallback_providers:
              - { provider: backup-openai, backend: quantum }
`,
      }),
    );
    expect(issues).toEqual([
      {
        file: "tarsy.yaml",
        path: "agent_chains.d.stages[0].agents[0].fallback_providers[0].backend",
        message: expect.stringContaining('"google-native"|"langchain"'),
      },
      {
        file: "tarsy.yaml",
        path: "defaults.fallback_providers[0].provider",
        message: 'unknown LLM provider "no-such-provider"',
      },
      {
        file: "tarsy.yaml",
        path: "agent_chains.c.fallback_providers[0].backend",
        message:
          'backend "google-native" cannot run fallback LLM provider "backup-claude" (type anthropic)',
      },
    ]);
  });

  it("an entry needs a provider (backend defaults to langchain, as in the Go TARSy); a timeout must be a positive duration", () => {
    const issues = loadIssues({
      providers: `
llm_providers:
  slow:
    type: openai
    model: m
    stall_timeout: 0
`,
      tarsy: `
defaults:
  fallback_providers:
    - { provider: slow }
    - { backend: langchain }
`,
    });
    expect(issues.map((i) => i.path)).toEqual([
      "defaults.fallback_providers[1].provider",
      "llm_providers.slow.stall_timeout",
    ]);
    const { config } = load({
      providers: "llm_providers:\n  slow: { type: openai, model: m }\n",
      tarsy: "defaults:\n  fallback_providers:\n    - { provider: slow }\n",
    });
    expect(config.defaults.fallback_providers).toEqual([
      { provider: "slow", backend: "langchain" },
    ]);
  });

  it("with the providers' environment given, every fallback's key variable must be set", () => {
    const dir = configDir({ providers: PROVIDERS, tarsy: TARSY });
    const env = { BACKUP_OPENAI_KEY: "k1", BACKUP_GEMINI_KEY: "k3" };
    let error: unknown;
    try {
      loadConfig({ configDir: dir, env: {}, credentialEnv: env });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues.map((i) => [i.path, i.message])).toEqual([
      [
        "llm_providers.backup-claude.api_key_env",
        'environment variable BACKUP_CLAUDE_KEY is not set: fallback LLM provider "backup-claude" reads its API key from it',
      ],
    ]);
    // All set: it loads. Without a credential environment (services that hold no keys) too.
    expect(() =>
      loadConfig({
        configDir: dir,
        env: {},
        credentialEnv: { ...env, BACKUP_CLAUDE_KEY: "k2" },
      }),
    ).not.toThrow();
    expect(() => loadConfig({ configDir: dir, env: {} })).not.toThrow();
  });

  it("a Vertex AI fallback's credential variables are checked like a primary's", () => {
    const issues = loadIssues({
      providers: `
llm_providers:
  vertex-backup:
    type: vertexai
    model: gemini-2.5-pro
    project_env: BACKUP_GCP_PROJECT
    location_env: BACKUP_GCP_LOCATION
`,
      tarsy: `
defaults:
  fallback_providers:
    - { provider: vertex-backup, backend: google-native }
`,
    });
    expect(issues.map((i) => i.path)).toEqual([
      "llm_providers.vertex-backup.project_env",
      "llm_providers.vertex-backup.location_env",
    ]);
  });
});
