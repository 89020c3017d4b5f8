/** Loading with no files (the built-ins), and files that override built-ins by name. */
import { describe, expect, it } from "vitest";
import type { StdioTransport } from "../src/index.ts";
import { load } from "./helpers.ts";

describe("built-ins", () => {
  it("form a complete configuration when no file exists", () => {
    const { config, warnings } = load({}, { GOOGLE_API_KEY: "k" });
    expect([...config.chains.keys()]).toEqual(["kubernetes-agent-chain"]);
    expect([...config.agents.keys()]).toEqual([
      "KubernetesAgent",
      "ChatAgent",
      "SynthesisAgent",
      "ExecSummaryAgent",
      "ScoringAgent",
      "GeneralWorker",
    ]);
    expect([...config.llmProviders.keys()]).toEqual([
      "google-default",
      "openai-default",
      "anthropic-default",
      "xai-default",
      "vertexai-default",
    ]);
    expect(config.defaults).toMatchObject({
      llm_provider: "google-default",
      max_iterations: 40,
      alert_type: "kubernetes",
      iteration_timeout_ms: 120_000,
      alert_masking: { enabled: true, pattern_group: "security" },
    });
    expect(config.queue.max_concurrent_sessions).toBe(5);
    expect(config.queue.max_pending_per_alert_type).toBe(500);
    expect(config.queue.session_timeout_ms).toBe(15 * 60_000);
    expect(warnings).toEqual([]);
  });

  it("define kubernetes-server with kubernetes masking and the seeds' summarization", () => {
    const { config } = load({}, { KUBECONFIG: "/home/sre/.kube/config" });
    const server = config.mcpServers.get("kubernetes-server");
    expect(server?.transport).toEqual({
      type: "stdio",
      command: "npx",
      args: [
        "-y",
        "kubernetes-mcp-server",
        "--read-only",
        "--disable-destructive",
        "--kubeconfig",
        "/home/sre/.kube/config",
      ],
      env: {},
    });
    expect(server?.data_masking).toEqual({
      enabled: true,
      pattern_groups: ["kubernetes"],
      patterns: ["certificate", "token", "email"],
      custom_patterns: [],
    });
    expect(server?.summarization).toEqual({
      enabled: true,
      size_threshold_tokens: 5000,
      summary_max_token_limit: 1000,
    });
    expect(server?.instructions).toContain("namespace");
  });

  it("leave out --kubeconfig when KUBECONFIG is not set", () => {
    const { config } = load({});
    const transport = config.mcpServers.get("kubernetes-server")?.transport as StdioTransport;
    expect(transport.args).not.toContain("--kubeconfig");
  });

  it("warn when the default provider's API key variable is not set", () => {
    const { warnings } = load({});
    expect(warnings).toContainEqual({
      file: "<built-in>",
      path: "llm_providers.google-default.api_key_env",
      message: "the default LLM provider reads its key from GOOGLE_API_KEY, which is not set",
    });
  });
});

describe("overrides of built-ins (by name, replacing the whole entry)", () => {
  const tarsy = `
mcp_servers:
  kubernetes-server:
    transport: { type: http, url: "http://k8s-mcp:8080/mcp" }
agents:
  KubernetesAgent:
    mcp_servers: [kubernetes-server, extra]
    custom_instructions: mine
  ChatAgent:
    mcp_servers: []
  SynthesisAgent:
    custom_instructions: synthesize briefly
  ExecSummaryAgent:
    llm_backend: langchain
agent_chains:
  kubernetes-agent-chain:
    alert_types: [kubernetes, Extra]
    stages:
      - name: first
        agents: [{ name: KubernetesAgent }]
`;
  const tarsyWithExtra = `${tarsy}
  extra-chain:
    alert_types: [other]
    stages: [{ name: s, agents: [KubernetesAgent] }]
`.replace("agent_chains:", "agent_chains:");

  it("replaces agents, MCP servers and chains", () => {
    const { config } = load({
      tarsy: tarsyWithExtra.replace(
        "mcp_servers:\n  kubernetes-server:",
        "mcp_servers:\n  extra:\n    transport: { type: stdio, command: extra-mcp }\n  kubernetes-server:",
      ),
    });
    expect(config.agents.get("KubernetesAgent")).toMatchObject({
      mcp_servers: ["kubernetes-server", "extra"],
      custom_instructions: "mine",
      builtin: false,
    });
    expect(config.agents.get("SynthesisAgent")?.custom_instructions).toBe("synthesize briefly");
    const server = config.mcpServers.get("kubernetes-server");
    expect(server?.transport).toEqual({
      type: "http",
      url: "http://k8s-mcp:8080/mcp",
      verify_ssl: true,
      custom_headers: {},
    });
    // Replaced, not merged: the built-in's masking does not survive the override.
    expect(server?.data_masking.enabled).toBe(false);
    const chain = config.chains.get("kubernetes-agent-chain");
    expect(chain?.alert_types).toEqual(["kubernetes", "Extra"]);
    expect(chain?.stages.map((s) => s.name)).toEqual(["first"]);
    expect(config.sources.chains.get("kubernetes-agent-chain")).toMatch(/tarsy\.yaml$/);
    expect(config.sources.agents.get("ChatAgent")).toMatch(/tarsy\.yaml$/);
    expect(config.sources.agents.get("SynthesisAgent")).toMatch(/tarsy\.yaml$/);
  });

  it("replaces LLM providers from llm-providers.yaml", () => {
    const { config } = load({
      providers: `
llm_providers:
  google-default:
    type: google
    model: gemini-2.5-flash
    max_tool_result_tokens: 500000
  openai-default:
    type: openai
    model: gpt-4.1
`,
    });
    expect(config.llmProviders.get("google-default")).toEqual({
      name: "google-default",
      type: "google",
      model: "gemini-2.5-flash",
      api_key_env: "GOOGLE_API_KEY",
      max_tool_result_tokens: 500_000,
      builtin: false,
    });
    expect(config.llmProviders.get("openai-default")?.model).toBe("gpt-4.1");
    expect(config.llmProviders.get("anthropic-default")?.builtin).toBe(true);
  });
});
