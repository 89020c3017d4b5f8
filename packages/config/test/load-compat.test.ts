/** TARSy's own config format: settings not supported here, older and shorthand forms. */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveAgentConfig } from "../src/index.ts";
import { load, loadIssues } from "./helpers.ts";

describe("TARSy settings this implementation does not support", () => {
  it("load without error and are reported once per setting, naming every place", () => {
    const { config, warnings, dir } = load({
      tarsy: `
agents:
  KubernetesAgent:
    mcp_servers: [kubernetes-server]
    sub_agents: [GeneralWorker]
agent_chains:
  a:
    alert_types: [a]
    compose_provider: google-default
    scoring: { enabled: true }
    stages:
      - name: s
        agents: [{ name: KubernetesAgent, sub_agents: [GeneralWorker] }]
  b:
    alert_types: [b]
    compose_provider: google-default
    scoring: { enabled: false }
    stages: [{ name: s, agents: [KubernetesAgent] }]
system:
  prompt_caching: { enabled: true }
  allowed_ws_origins: ["https://tarsy.example.com"]
mcp_servers:
  old-a:
    transport: { type: http, url: "http://127.0.0.1:9/mcp", sse_read_timeout: 30 }
  old-b:
    transport: { type: http, url: "http://127.0.0.1:9/mcp", sse_read_timeout: 60 }
memory:
  enabled: true
`,
    });
    expect(config.chains.has("a")).toBe(true);
    expect(config.system.allowed_ws_origins).toEqual(["https://tarsy.example.com"]);
    const file = join(dir, "tarsy.yaml");
    const unsupported = (key: string, does: string, issue: number) =>
      `"${key}" is not supported yet (in the Go TARSy: ${does}; planned in #${issue}); ignored`;
    expect(warnings).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          file,
          path: "mcp_servers.old-a.transport.sse_read_timeout, mcp_servers.old-b.transport.sse_read_timeout",
          message: unsupported(
            "sse_read_timeout",
            "read timeout of an SSE stream (older TARSy)",
            23,
          ),
        }),
        // Investigation memory is defaults.memory, here as in the Go TARSy: a top-level
        // `memory` is read by neither.
        expect.objectContaining({
          file,
          path: "memory",
          message: '"memory" is not a known setting; ignored',
        }),
      ]),
    );
    const issues = warnings.filter((w) => w.unsupported).map((w) => w.unsupported?.issue);
    expect(issues.sort()).toEqual([23]);
    // The compose stage's model is read, not listed.
    expect(warnings.filter((w) => w.path.includes("compose"))).toEqual([]);
    // system.prompt_caching is read, not listed.
    expect(warnings.filter((w) => w.path.includes("prompt_caching"))).toEqual([]);
    expect(config.system.prompt_caching).toEqual({ enabled: true });
    // sub_agents are read, not listed.
    expect(warnings.filter((w) => w.path.includes("sub_agents"))).toEqual([]);
    expect(config.agents.get("KubernetesAgent")?.sub_agents).toEqual([{ name: "GeneralWorker" }]);
    // Scoring is read, not listed: chain a scores its sessions, chain b does not.
    expect(warnings.filter((w) => w.path.includes("scoring"))).toEqual([]);
    expect(config.chains.get("a")?.scoring).toEqual({ enabled: true });
    expect(config.chains.get("b")?.scoring).toEqual({ enabled: false });
  });

  it("tells a key nobody knows from a TARSy key not supported yet", () => {
    const { warnings } = load({
      tarsy: `
defaults:
  max_iteratons: 3
mcp_servers:
  old:
    transport: { type: http, url: "http://127.0.0.1:9/mcp", disable_ssl_verification: true }
`,
    });
    expect(warnings.map((w) => [w.path, w.message, w.unsupported?.issue])).toEqual(
      expect.arrayContaining([
        [
          "mcp_servers.old.transport.disable_ssl_verification",
          expect.stringMatching(
            /^"disable_ssl_verification" is not supported yet .*planned in #23\); ignored$/,
          ),
          23,
        ],
        ["defaults.max_iteratons", '"max_iteratons" is not a known setting; ignored', undefined],
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
  it("accept a top-level `retention:` as system.retention, whose own keys win", () => {
    const alone = load({
      tarsy: `
retention:
  session_retention_days: 90
  event_ttl: 48h
`,
    });
    expect(alone.config.system.retention).toEqual({
      session_retention_days: 90,
      event_ttl_ms: 48 * 3_600_000,
      cleanup_interval_ms: 12 * 3_600_000,
      hard_delete_after_ms: 30 * 86_400_000,
    });
    expect(alone.warnings.filter((w) => w.path.includes("retention"))).toEqual([]);

    const both = load({
      tarsy: `
retention:
  session_retention_days: 90
  cleanup_interval: 1h
system:
  retention:
    session_retention_days: 30
`,
    });
    expect(both.config.system.retention).toMatchObject({
      session_retention_days: 30,
      cleanup_interval_ms: 3_600_000,
    });
    // A wrong value is reported at its own path.
    const bad = loadIssues({ tarsy: "retention:\n  session_retention_days: 0\n" });
    expect(bad.map((i) => i.path)).toEqual(["retention.session_retention_days"]);
  });

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
});
