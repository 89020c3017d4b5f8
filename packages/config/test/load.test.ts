import { copyFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig, resolveAgentConfig, type StdioTransport } from "../src/index.ts";
import { configDir, load, loadIssues } from "./helpers.ts";

const EXAMPLES = resolve(import.meta.dirname, "../../../deploy/config");

describe("built-ins", () => {
  it("form a complete configuration when no file exists", () => {
    const { config, warnings } = load({}, { GOOGLE_API_KEY: "k" });
    expect([...config.chains.keys()]).toEqual(["kubernetes-agent-chain"]);
    expect([...config.agents.keys()]).toEqual([
      "KubernetesAgent",
      "ChatAgent",
      "SynthesisAgent",
      "ExecSummaryAgent",
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
      max_iterations: 20,
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

describe("interpolation in files", () => {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: literal ${VAR} placeholders are the input under test
  it("substitutes {{.VAR}} and ${VAR} in values, typing unquoted ones like the YAML would", () => {
    const { config } = load(
      {
        tarsy: `
# Comments are not interpolated: {{.NOT_SET_ANYWHERE}} \${ALSO_NOT_SET}
defaults:
  max_iterations: {{.MAX_ITER}}
queue:
  session_timeout: \${SESSION_TIMEOUT}
mcp_servers:
  api:
    transport:
      type: http
      url: "https://{{.API_HOST}}:\${API_PORT}/mcp"
      bearer_token: "{{.API_TOKEN}}"
      custom_headers:
        X-Env: \${DEPLOY_ENV:-dev}
  local:
    transport:
      type: stdio
      command: \${MCP_BIN}
      args: ["--kubeconfig", {{.KUBECONFIG}}]
agents:
  KubernetesAgent:
    mcp_servers: [api, local]
`,
      },
      {
        MAX_ITER: "7",
        SESSION_TIMEOUT: "40m",
        API_HOST: "mcp.example.com",
        API_PORT: "8443",
        API_TOKEN: "s3cr3t",
        MCP_BIN: "/usr/bin/my-mcp",
        KUBECONFIG: "/etc/kube/config",
      },
    );
    expect(config.defaults.max_iterations).toBe(7);
    expect(config.queue.session_timeout_ms).toBe(2_400_000);
    expect(config.mcpServers.get("api")?.transport).toEqual({
      type: "http",
      url: "https://mcp.example.com:8443/mcp",
      bearer_token: "s3cr3t",
      verify_ssl: true,
      custom_headers: { "X-Env": "dev" },
    });
    expect(config.mcpServers.get("local")?.transport).toEqual({
      type: "stdio",
      command: "/usr/bin/my-mcp",
      args: ["--kubeconfig", "/etc/kube/config"],
      env: {},
    });
  });

  it("names a missing variable with the file and path where it is needed", () => {
    const issues = loadIssues({
      tarsy: `
mcp_servers:
  argocd:
    transport:
      type: stdio
      command: npx
      args: ["argocd-mcp", "--token", "{{.ARGOCD_TOKEN}}"]
`,
    });
    expect(issues).toEqual([
      {
        file: "tarsy.yaml",
        path: "mcp_servers.argocd.transport.args[2]",
        message: 'environment variable "ARGOCD_TOKEN" is not set',
      },
    ]);
  });

  it("leaves optional values empty with a warning instead of an error", () => {
    const { config, warnings, dir } = load({
      tarsy: `
mcp_servers:
  monitoring:
    transport:
      type: http
      url: http://monitoring:8080/mcp
      bearer_token: "{{.MONITORING_TOKEN}}"
`,
      providers: `
llm_providers:
  proxy:
    type: openai
    model: gpt-5
    base_url: \${PROXY_URL}
`,
    });
    const transport = config.mcpServers.get("monitoring")?.transport;
    expect(transport).not.toHaveProperty("bearer_token");
    expect(config.llmProviders.get("proxy")).not.toHaveProperty("base_url");
    expect(warnings).toContainEqual({
      file: join(dir, "tarsy.yaml"),
      path: "mcp_servers.monitoring.transport.bearer_token",
      message: 'environment variable "MONITORING_TOKEN" is not set; using an empty value',
    });
    expect(warnings).toContainEqual({
      file: join(dir, "llm-providers.yaml"),
      path: "llm_providers.proxy.base_url",
      message: 'environment variable "PROXY_URL" is not set; using an empty value',
    });
  });
});

describe("TARSy settings this implementation does not support", () => {
  it("load without error and are reported once per setting, naming every place", () => {
    const { config, warnings, dir } = load({
      tarsy: `
agents:
  KubernetesAgent:
    mcp_servers: [kubernetes-server]
    sub_agents: [LogAnalyzer]
agent_chains:
  a:
    alert_types: [a]
    scoring: { enabled: true }
    stages: [{ name: s, agents: [{ name: KubernetesAgent, sub_agents: [X] }] }]
  b:
    alert_types: [b]
    scoring: { enabled: false }
    stages: [{ name: s, agents: [KubernetesAgent] }]
system:
  slack: { enabled: true, channel: C123 }
  allowed_ws_origins: ["https://tarsy.example.com"]
memory:
  enabled: true
`,
    });
    expect(config.chains.has("a")).toBe(true);
    expect(config.system.allowed_ws_origins).toEqual(["https://tarsy.example.com"]);
    const file = join(dir, "tarsy.yaml");
    const unsupported = "is a TARSy setting this implementation does not support yet; ignored";
    expect(warnings).toEqual(
      expect.arrayContaining([
        {
          file,
          path: "agent_chains.a.scoring, agent_chains.b.scoring",
          message: `"scoring" ${unsupported}`,
        },
        {
          file,
          path: "agents.KubernetesAgent.sub_agents, agent_chains.a.stages[0].agents[0].sub_agents",
          message: `"sub_agents" ${unsupported}`,
        },
        { file, path: "system.slack", message: `"slack" ${unsupported}` },
        { file, path: "memory", message: `"memory" ${unsupported}` },
      ]),
    );
  });

  it("maps TARSy's iteration_strategy to a backend", () => {
    const { config } = load({
      tarsy: `
agent_chains:
  k:
    alert_types: [k]
    stages:
      - name: s
        agents:
          - { name: KubernetesAgent, iteration_strategy: react }
          - { name: KubernetesAgent, iteration_strategy: native-thinking }
`,
    });
    const chain = config.chains.get("k");
    if (!chain) throw new Error("chain k missing");
    const [react, native] = chain.stages[0]?.agents ?? [];
    if (!react || !native) throw new Error("agents missing");
    expect(resolveAgentConfig(config, chain, 0, react).llm_backend).toBe("langchain");
    expect(resolveAgentConfig(config, chain, 0, native).llm_backend).toBe("google-native");
  });
});

describe("the example files", () => {
  it("load, validate and define what they document", () => {
    const dir = configDir();
    copyFileSync(join(EXAMPLES, "tarsy.yaml.example"), join(dir, "tarsy.yaml"));
    copyFileSync(join(EXAMPLES, "llm-providers.yaml.example"), join(dir, "llm-providers.yaml"));
    const { config, warnings } = loadConfig({
      configDir: dir,
      env: { GOOGLE_API_KEY: "k", MONITORING_TOKEN: "t" },
    });
    expect(warnings).toEqual([]);
    expect([...config.chains.keys()]).toEqual([
      "kubernetes-agent-chain",
      "kubernetes-deep-troubleshooting",
      "kubernetes-replicas",
      "security-incident",
      "demo-scripted",
    ]);
    expect([...config.mcpServers.keys()]).toEqual([
      "kubernetes-server",
      "monitoring-server",
      "argocd-server",
    ]);
    expect(config.llmProviders.get("scripted-demo")?.type).toBe("scripted");
    expect(config.llmProviders.get("google-default")?.model).toBe("gemini-2.5-flash");
    expect(config.queue).toEqual({
      worker_count: 5,
      max_concurrent_sessions: 5,
      max_pending_per_alert_type: 500,
      poll_interval_ms: 1000,
      poll_interval_jitter_ms: 500,
      session_timeout_ms: 900_000,
      chat_timeout_ms: 900_000,
      graceful_shutdown_timeout_ms: 900_000,
      orphan_detection_interval_ms: 300_000,
      orphan_threshold_ms: 300_000,
      heartbeat_interval_ms: 30_000,
    });
    expect(config.mcpServers.get("monitoring-server")?.transport).toMatchObject({
      bearer_token: "t",
      timeout_ms: 30_000,
    });
    expect(config.mcpServers.get("argocd-server")?.transport).toMatchObject({ timeout_ms: 60_000 });
    expect(config.mcpServers.get("kubernetes-server")?.data_masking.custom_patterns).toEqual([
      {
        name: "internal_ticket_token",
        pattern: "(?i)tkt-[a-z0-9]{24}",
        replacement: "[MASKED_TICKET_TOKEN]",
        description: "Internal ticketing tokens",
      },
    ]);
  });
});

describe("TARSy's older and shorthand forms", () => {
  it("accept stage `agent:`, agent names as strings, `headers`, numeric env values and seconds", () => {
    const { config } = load({
      tarsy: `
mcp_servers:
  api:
    transport:
      type: sse
      url: http://api:9000/sse
      timeout: 45s
      headers: { X-Old: a, X-Both: old }
      custom_headers: { X-Both: new }
  proc:
    transport:
      type: stdio
      command: proc
      env: { PORT: 3000, DEBUG: true }
agents:
  KubernetesAgent:
    mcp_servers: [api, proc]
agent_chains:
  old-style:
    alert_types: [old]
    stages:
      - name: one
        agent: KubernetesAgent
      - name: two
        agents: [KubernetesAgent, ChatAgent]
`,
    });
    expect(config.mcpServers.get("api")?.transport).toEqual({
      type: "sse",
      url: "http://api:9000/sse",
      verify_ssl: true,
      timeout_ms: 45_000,
      custom_headers: { "X-Old": "a", "X-Both": "new" },
    });
    expect(config.mcpServers.get("proc")?.transport).toMatchObject({
      env: { PORT: "3000", DEBUG: "true" },
    });
    const stages = config.chains.get("old-style")?.stages;
    expect(stages?.map((s) => s.agents.map((a) => a.name))).toEqual([
      ["KubernetesAgent"],
      ["KubernetesAgent", "ChatAgent"],
    ]);
  });

  it("leave an unset shell-style variable in free text as written (shell snippets)", () => {
    const { config, warnings } = load({
      tarsy: `
agents:
  KubernetesAgent:
    mcp_servers: [kubernetes-server]
    custom_instructions: "Team {{.TEAM}}; run: echo \${HOME_DIR} | grep \${PATTERN:-x}"
`,
    });
    expect(config.agents.get("KubernetesAgent")?.custom_instructions).toBe(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the literal placeholder is the expected text
      "Team ; run: echo ${HOME_DIR} | grep x",
    );
    expect(warnings.map((w) => [w.path, w.message])).toEqual([
      [
        "agents.KubernetesAgent.custom_instructions",
        'environment variable "TEAM" is not set; using an empty value',
      ],
      [
        "agents.KubernetesAgent.custom_instructions",
        'environment variable "HOME_DIR" is not set; left as written',
      ],
      [
        "llm_providers.google-default.api_key_env",
        "the default LLM provider reads its key from GOOGLE_API_KEY, which is not set",
      ],
    ]);
  });
});
