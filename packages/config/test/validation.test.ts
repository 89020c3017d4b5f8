import { describe, expect, it } from "vitest";
import { ConfigError, formatIssue, loadConfig } from "../src/index.ts";
import { configDir, loadIssues, withoutLines } from "./helpers.ts";

/** One stage with the given agent; the rest of the file is valid. */
function chainWith(agent: string, extra = ""): string {
  return `
agent_chains:
  c:
    alert_types: [c]
    stages:
      - name: s
        agents:
          - ${agent}
${extra}`;
}

describe("validation: every problem at once, each with file, path and message", () => {
  it("reports unknown references: chain → agent, agent → MCP server, stage → provider", () => {
    const issues = withoutLines(
      loadIssues({
        tarsy: `
agents:
  my-agent:
    mcp_servers: [kubernetes-server, no-such-server]
agent_chains:
  c:
    alert_types: [c]
    llm_provider: no-such-chain-provider
    executive_summary_provider: no-such-summary-provider
    stages:
      - name: s
        agents:
          - name: NoSuchAgent
          - name: my-agent
            llm_provider: no-such-provider
            mcp_servers: [ghost]
        synthesis:
          agent: NoSuchSynthesizer
    chat:
      agent: NoSuchChatAgent
      mcp_servers: [phantom]
    scoring:
      enabled: true
      agent: NoSuchJudge
      llm_provider: no-such-judge-provider
`,
      }),
    );
    expect(issues).toEqual([
      {
        file: "tarsy.yaml",
        path: "agents.my-agent.mcp_servers[1]",
        message: 'unknown MCP server "no-such-server"',
      },
      {
        file: "tarsy.yaml",
        path: "agent_chains.c.llm_provider",
        message: 'unknown LLM provider "no-such-chain-provider"',
      },
      {
        file: "tarsy.yaml",
        path: "agent_chains.c.executive_summary_provider",
        message: 'unknown LLM provider "no-such-summary-provider"',
      },
      {
        file: "tarsy.yaml",
        path: "agent_chains.c.stages[0].agents[0].name",
        message: 'unknown agent "NoSuchAgent"',
      },
      {
        file: "tarsy.yaml",
        path: "agent_chains.c.stages[0].agents[1].llm_provider",
        message: 'unknown LLM provider "no-such-provider"',
      },
      {
        file: "tarsy.yaml",
        path: "agent_chains.c.stages[0].agents[1].mcp_servers[0]",
        message: 'unknown MCP server "ghost"',
      },
      {
        file: "tarsy.yaml",
        path: "agent_chains.c.stages[0].synthesis.agent",
        message: 'unknown agent "NoSuchSynthesizer"',
      },
      {
        file: "tarsy.yaml",
        path: "agent_chains.c.chat.agent",
        message: 'unknown agent "NoSuchChatAgent"',
      },
      {
        file: "tarsy.yaml",
        path: "agent_chains.c.chat.mcp_servers[0]",
        message: 'unknown MCP server "phantom"',
      },
      {
        file: "tarsy.yaml",
        path: "agent_chains.c.scoring.agent",
        message: 'unknown agent "NoSuchJudge"',
      },
      {
        file: "tarsy.yaml",
        path: "agent_chains.c.scoring.llm_provider",
        message: 'unknown LLM provider "no-such-judge-provider"',
      },
    ]);
  });

  it("reports an alert type claimed by two chains, naming the other chain", () => {
    const issues = withoutLines(
      loadIssues({
        tarsy: `
agent_chains:
  first:
    alert_types: [PodCrashLoop]
    stages: [{ name: s, agents: [KubernetesAgent] }]
  second:
    alert_types: [Other, PodCrashLoop]
    stages: [{ name: s, agents: [KubernetesAgent] }]
  third:
    alert_types: [kubernetes]
    stages: [{ name: s, agents: [KubernetesAgent] }]
`,
      }),
    );
    expect(issues).toEqual([
      {
        file: "tarsy.yaml",
        path: "agent_chains.second.alert_types[1]",
        message: 'alert type "PodCrashLoop" is already handled by chain "first"',
      },
      {
        file: "tarsy.yaml",
        path: "agent_chains.third.alert_types[0]",
        message: 'alert type "kubernetes" is already handled by chain "kubernetes-agent-chain"',
      },
    ]);
  });

  it("reports invalid regexes and unknown masking names", () => {
    const issues = withoutLines(
      loadIssues({
        tarsy: `
defaults:
  alert_masking: { pattern_group: everything }
mcp_servers:
  s:
    transport: { type: stdio, command: s }
    data_masking:
      pattern_groups: [kubernetes, nope-group]
      patterns: [token, nope-pattern]
      custom_patterns:
        - name: broken
          pattern: "([unclosed"
          replacement: "[MASKED_X]"
        - name: fine
          pattern: "(?i)ok-[0-9]+"
          replacement: "[MASKED_OK]"
`,
      }),
    );
    expect(issues).toHaveLength(4);
    expect(issues).toContainEqual({
      file: "tarsy.yaml",
      path: "defaults.alert_masking.pattern_group",
      message: 'unknown masking pattern group "everything"',
    });
    expect(issues).toContainEqual({
      file: "tarsy.yaml",
      path: "mcp_servers.s.data_masking.pattern_groups[1]",
      message: 'unknown masking pattern group "nope-group"',
    });
    expect(issues).toContainEqual({
      file: "tarsy.yaml",
      path: "mcp_servers.s.data_masking.patterns[1]",
      message: 'unknown masking pattern "nope-pattern"',
    });
    const regex = issues.find(
      (i) => i.path === "mcp_servers.s.data_masking.custom_patterns[0].pattern",
    );
    expect(regex?.message).toMatch(/^invalid pattern: .*(Unterminated|unterminated|Invalid)/);
  });

  it("reports bad enum values", () => {
    const issues = withoutLines(
      loadIssues({
        tarsy: `
defaults:
  success_policy: most
mcp_servers:
  s:
    transport: { type: grpc, url: "http://x" }
${chainWith("{ name: KubernetesAgent, llm_backend: openai-native }")}`,
        providers: `
llm_providers:
  p:
    type: mistral
    model: m
`,
      }),
    );
    expect(issues).toEqual([
      {
        file: "tarsy.yaml",
        path: "defaults.success_policy",
        message: 'expected one of "all"|"any"',
      },
      {
        file: "tarsy.yaml",
        path: "mcp_servers.s.transport.type",
        message: 'expected one of "stdio"|"http"|"sse"',
      },
      {
        file: "tarsy.yaml",
        path: "agent_chains.c.stages[0].agents[0].llm_backend",
        message: 'expected one of "google-native"|"langchain"|"scripted"',
      },
      {
        file: "llm-providers.yaml",
        path: "llm_providers.p.type",
        message:
          'expected one of "google"|"openai"|"anthropic"|"xai"|"vertexai"|"openai-compatible"|"scripted"',
      },
    ]);
  });

  it("reports negative and zero numbers and bad durations", () => {
    const issues = withoutLines(
      loadIssues({
        tarsy: `
queue:
  max_concurrent_sessions: 0
  max_pending_per_alert_type: -1
  session_timeout: 15
  chat_timeout: soon
  wrap_up_reserve: 0s
defaults:
  max_iterations: -1
mcp_servers:
  s:
    transport: { type: http, url: "http://x", timeout: -5 }
    summarization: { size_threshold_tokens: 10 }
${chainWith("{ name: KubernetesAgent, max_iterations: -3 }", "        replicas: 0")}`,
      }),
    );
    expect(issues.map(formatIssue)).toEqual([
      "tarsy.yaml: defaults.max_iterations: Too small: expected number to be >=1",
      "tarsy.yaml: queue.max_concurrent_sessions: Too small: expected number to be >=1",
      "tarsy.yaml: queue.max_pending_per_alert_type: Too small: expected number to be >=0",
      "tarsy.yaml: queue.session_timeout: expected a duration such as 500ms, 30s, 40m or 1h",
      'tarsy.yaml: queue.chat_timeout: invalid duration "soon": expected a duration such as 500ms, 30s, 40m or 1h',
      "tarsy.yaml: queue.wrap_up_reserve: must be longer than 0",
      "tarsy.yaml: mcp_servers.s.transport.timeout: Too small: expected number to be >0",
      "tarsy.yaml: mcp_servers.s.summarization.size_threshold_tokens: Too small: expected number to be >=100",
      "tarsy.yaml: agent_chains.c.stages[0].agents[0].max_iterations: Too small: expected number to be >=1",
      "tarsy.yaml: agent_chains.c.stages[0].replicas: Too small: expected number to be >=1",
    ]);
  });

  it("reports missing required fields", () => {
    const issues = withoutLines(
      loadIssues({
        tarsy: `
mcp_servers:
  no-command:
    transport: { type: stdio }
  no-url:
    transport: { type: sse }
  no-transport:
    instructions: hi
agent_chains:
  no-types:
    stages: [{ name: s, agents: [KubernetesAgent] }]
  no-stages:
    alert_types: [x]
  no-agents:
    alert_types: [y]
    stages: [{ name: s }]
`,
        providers: `
llm_providers:
  no-model:
    type: openai
`,
      }),
    );
    expect(issues.map(formatIssue)).toEqual([
      "tarsy.yaml: mcp_servers.no-command.transport.command: is required for stdio transport",
      "tarsy.yaml: mcp_servers.no-url.transport.url: is required for sse transport",
      "tarsy.yaml: mcp_servers.no-transport.transport: is required",
      "tarsy.yaml: agent_chains.no-types.alert_types: is required",
      "tarsy.yaml: agent_chains.no-stages.stages: is required",
      "tarsy.yaml: agent_chains.no-agents.stages[0].agents: is required",
      "llm-providers.yaml: llm_providers.no-model.model: is required",
    ]);
  });

  it("reports structural mistakes: replicas with several agents, duplicate stages, unusable backends", () => {
    const issues = withoutLines(
      loadIssues({
        tarsy: `
defaults:
  alert_type: nothing-handles-this
agent_chains:
  c:
    alert_types: [c]
    llm_provider: openai-default
    stages:
      - name: s
        replicas: 2
        agents: [KubernetesAgent, ChatAgent]
      - name: s
        agents:
          - { name: KubernetesAgent, llm_backend: google-native }
          - { name: KubernetesAgent, llm_provider: google-default, llm_backend: scripted }
`,
      }),
    );
    expect(issues.map(formatIssue)).toEqual([
      "tarsy.yaml: agent_chains.c.stages[0].replicas: replicas can only be used with a single agent",
    ]);
    const fixed = withoutLines(
      loadIssues({
        tarsy: `
defaults:
  alert_type: nothing-handles-this
agent_chains:
  c:
    alert_types: [c]
    llm_provider: openai-default
    stages:
      - name: s
        agents: [KubernetesAgent]
      - name: s
        agents:
          - { name: KubernetesAgent, llm_backend: google-native }
          - { name: KubernetesAgent, llm_provider: google-default, llm_backend: scripted }
`,
      }),
    );
    expect(fixed.map(formatIssue)).toEqual([
      'tarsy.yaml: agent_chains.c.stages[1].name: duplicate stage name "s"',
      'tarsy.yaml: agent_chains.c.stages[1].agents[0]: llm_backend "google-native" cannot run LLM provider "openai-default" (type openai)',
      'tarsy.yaml: agent_chains.c.stages[1].agents[1]: llm_backend "scripted" cannot run LLM provider "google-default" (type google)',
      'tarsy.yaml: defaults.alert_type: no chain handles the default alert type "nothing-handles-this"',
    ]);
  });

  it("reports MCP server ids that cannot be addressed as server.tool", () => {
    const issues = withoutLines(
      loadIssues({
        tarsy: `
mcp_servers:
  my.server:
    transport: { type: stdio, command: x }
`,
      }),
    );
    expect(issues.map(formatIssue)).toEqual([
      "tarsy.yaml: mcp_servers.my.server: MCP server ids may only hold letters, digits, '_' and '-' (tools are addressed as server.tool)",
    ]);
  });

  it("reports YAML syntax errors with their line", () => {
    const issues = loadIssues({
      tarsy: "agents:\n  a:\n    mcp_servers: [x\n  b: {}\n",
      providers: "llm_providers:\n  p:\n    type: openai\n    type: google\n",
    });
    expect(issues.map((i) => [i.file, i.path])).toEqual([
      ["tarsy.yaml", "line 4, column 3"],
      ["llm-providers.yaml", "line 4, column 5"],
    ]);
    expect(issues[0]?.message).toMatch(/^YAML syntax error: /);
    expect(issues[1]?.message).toBe("YAML syntax error: Map keys must be unique");
  });

  it("every issue names its line: the setting's own, or its nearest written ancestor's", () => {
    const issues = loadIssues({
      tarsy: `
queue:
  resume_interrupted: maybe
defaults:
  max_iterations: -1
agent_chains:
  c:
    alert_types: [c]
    stages:
      - name: s
        agents: [{ name: Ghost }]
  d:
    stages: [{ name: t, agents: [KubernetesAgent] }]
`,
      providers: `
llm_providers:
  p:
    type: openai
`,
    });
    expect(issues.map(formatIssue)).toEqual([
      "tarsy.yaml:5: defaults.max_iterations: Too small: expected number to be >=1",
      "tarsy.yaml:3: queue.resume_interrupted: expected boolean, received string",
      // Missing: the first line of the entry it is missing from.
      "tarsy.yaml:13: agent_chains.d.alert_types: is required",
      "llm-providers.yaml:4: llm_providers.p.model: is required",
      'tarsy.yaml:11: agent_chains.c.stages[0].agents[0].name: unknown agent "Ghost"',
    ]);
  });

  it("throws one ConfigError whose message lists every problem", () => {
    const dir = configDir({
      tarsy: `
defaults:
  max_iterations: 0
${chainWith("{ name: Ghost }")}`,
    });
    let caught: unknown;
    try {
      loadConfig({ configDir: dir, env: {} });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const error = caught as ConfigError;
    expect(error.code).toBe("config_invalid");
    expect(error.message).toContain("invalid configuration (2 problems)");
    expect(error.message).toContain(`${dir}/tarsy.yaml:3: defaults.max_iterations:`);
    expect(error.message).toContain(
      `${dir}/tarsy.yaml:11: agent_chains.c.stages[0].agents[0].name: unknown agent "Ghost"`,
    );
  });
});
