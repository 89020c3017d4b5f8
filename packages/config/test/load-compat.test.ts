/** TARSy's own config format: settings not supported here, older and shorthand forms. */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveAgentConfig } from "../src/index.ts";
import { load } from "./helpers.ts";

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
