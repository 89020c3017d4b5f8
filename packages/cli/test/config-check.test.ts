import { execFile } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const BIN = resolve(import.meta.dirname, "../bin/tarsy.mjs");
const EXAMPLES = resolve(import.meta.dirname, "../../../deploy/config");

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the real `tarsy` executable in a child process with only the given environment. */
function tarsy(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { PATH: process.env.PATH ?? "", ...env }, timeout: 20_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
        done({ code, stdout, stderr });
      },
    );
  });
}

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "tarsy-cli-"));
  dirs.push(dir);
  return dir;
}

function exampleDir(): string {
  const dir = tempDir();
  copyFileSync(join(EXAMPLES, "tarsy.yaml.example"), join(dir, "tarsy.yaml"));
  copyFileSync(join(EXAMPLES, "llm-providers.yaml.example"), join(dir, "llm-providers.yaml"));
  return dir;
}

describe("tarsy config check", () => {
  it("validates the example files and prints a summary (exit 0)", async () => {
    const dir = exampleDir();
    const run = await tarsy(["config", "check", "--config-dir", dir], {
      GOOGLE_API_KEY: "key",
      MONITORING_TOKEN: "token",
      MONITORING_STS_CLIENT_SECRET: "secret",
      KUBECONFIG: "/etc/kube/config",
    });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain("warning");
    expect(run.stdout).toContain(`Configuration: ${dir}`);
    expect(run.stdout).toContain("Chains (5):");
    expect(run.stdout).toContain("  kubernetes-agent-chain [overrides built-in]");
    expect(run.stdout).toContain("    1. parallel-investigation (multi_agent, success policy any)");
    expect(run.stdout).toContain(
      "       - KubernetesAgent: claude (langchain), max 8 iterations, tools: kubernetes-server",
    );
    expect(run.stdout).toContain("       - KubernetesAgent-3: google-default (google-native)");
    expect(run.stdout).toContain("    chat: disabled");
    expect(run.stdout).toContain("Agents (8):");
    expect(run.stdout).toContain("MCP servers (4):");
    expect(run.stdout).toContain(
      "  cli-mcp-server: disabled (enabled: false); http: https://cli-mcp-server:8443/mcp;",
    );
    expect(run.stdout).toContain(
      "  monitoring-server: http: http://monitoring-mcp.monitoring.svc:8080/mcp; masking email, token; summarize > 4000 tokens",
    );
    expect(run.stdout).toContain("LLM providers (12):");
    expect(run.stdout).toContain("  scripted-demo: scripted scripted");
    expect(run.stdout.trimEnd().endsWith("Configuration is valid.")).toBe(true);
  });

  it("shows each orchestrating agent's sub-agents and guardrails", async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, "tarsy.yaml"),
      `
defaults:
  llm_provider: google-default
  orchestrator: { agent_timeout: 20m }
agents:
  Lead:
    description: Leads an investigation
    mcp_servers: [kubernetes-server]
    sub_agents: [GeneralWorker]
    orchestrator: { max_concurrent_agents: 2 }
agent_chains:
  kubernetes-agent-chain:
    alert_types: [kubernetes]
    stages:
      - name: s
        agents: [Lead]
    chat:
      sub_agents: [{ name: KubernetesAgent, max_iterations: 4 }]
`,
    );
    const run = await tarsy(["config", "check", "-c", dir], { GOOGLE_API_KEY: "key" });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain("warning");
    expect(run.stdout).toContain(
      "       - Lead: google-default (google-native), max 40 iterations, tools: kubernetes-server, sub-agents: GeneralWorker (up to 2 at once, 20m each)",
    );
    expect(run.stdout).toContain(
      "    chat: ChatAgent on google-default (google-native), tools: kubernetes-server, sub-agents: KubernetesAgent (up to 5 at once, 20m each)",
    );
    expect(run.stdout).toContain(
      "  Lead: tools: kubernetes-server; sub-agents: GeneralWorker (up to 2 at once, 20m each)",
    );
    expect(run.stdout).toContain("  GeneralWorker [built-in]: tools: none");
  });

  it("reads TARSY_CONFIG_DIR and prints warnings on stdout without failing", async () => {
    const dir = exampleDir();
    const run = await tarsy(["config", "check"], {
      TARSY_CONFIG_DIR: dir,
      MONITORING_STS_CLIENT_SECRET: "secret",
    });
    expect(run.code).toBe(0);
    expect(run.stderr).toBe("");
    expect(run.stdout).toContain(`Configuration: ${dir}`);
    expect(run.stdout).toContain("3 warnings:");
    expect(run.stdout).toContain(
      `warning: ${dir}/tarsy.yaml: mcp_servers.monitoring-server.transport.bearer_token: environment variable "MONITORING_TOKEN" is not set; using an empty value`,
    );
    expect(run.stdout).toContain(
      `warning: ${dir}/tarsy.yaml: mcp_servers.kubernetes-server.transport.args[5]: environment variable "KUBECONFIG" is not set; using an empty value`,
    );
    expect(run.stdout.trimEnd().endsWith("Configuration is valid.")).toBe(true);
  });

  it("lists the Go TARSy settings not supported yet: exit 0, or 1 with --strict", async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, "tarsy.yaml"),
      `
agents:
  KubernetesAgent:
    agent_timeout: 5m
defaults:
  llm_provider: google-default
mcp_servers:
  legacy-sse:
    transport:
      type: http
      url: http://127.0.0.1:9/mcp
      sse_read_timeout: 30
      disable_ssl_verification: true
`,
    );
    const env = { GOOGLE_API_KEY: "key" };
    const file = join(dir, "tarsy.yaml");
    const lenient = await tarsy(["config", "check", "-c", dir], env);
    expect(lenient.code).toBe(0);
    expect(lenient.stderr).toBe("");
    expect(lenient.stdout).toContain("Not supported yet (3 settings of the Go TARSy, ignored):");
    expect(lenient.stdout).toContain(
      `  unsupported: ${file}: mcp_servers.legacy-sse.transport.sse_read_timeout: read timeout of an SSE stream (older TARSy) (#23)`,
    );
    expect(lenient.stdout).toMatch(
      /unsupported: .*mcp_servers\.legacy-sse\.transport\.disable_ssl_verification: .* \(#23\)/,
    );
    expect(lenient.stdout).toMatch(
      /unsupported: .*: agents\.KubernetesAgent\.agent_timeout: .* \(#31\)/,
    );
    expect(lenient.stdout.trimEnd().endsWith("Configuration is valid.")).toBe(true);

    const strict = await tarsy(["config", "check", "-c", dir, "--strict"], env);
    expect(strict.code).toBe(1);
    expect(strict.stderr).toBe("");
    expect(strict.stdout).toContain("Not supported yet (3 settings of the Go TARSy, ignored):");
    expect(strict.stdout.trimEnd()).toMatch(
      /Configuration is valid, but --strict: 3 settings not supported yet\.$/,
    );
  });

  it("passes the Go TARSy's quickstart and full example shapes with no variable set (exit 0, even --strict lists what is ignored)", async () => {
    const go = (shape: string) => resolve(import.meta.dirname, "../../config/test/go-tarsy", shape);
    // The quickstart's every key is read now (its compose_provider included): --strict passes.
    const quick = await tarsy(["config", "check", "-c", go("quickstart"), "--strict"]);
    expect(quick.stderr).toBe("");
    expect(quick.code).toBe(0);
    expect(quick.stdout).not.toContain("Not supported yet");
    expect(quick.stdout.trimEnd().endsWith("Configuration is valid.")).toBe(true);
    {
      const dir = go("full");
      // The full example's every key is read too (fallback lists, compose, prompt caching,
      // reasoning effort, label maps, sub-agents, skills, memory, scoring): --strict passes.
      const strict = await tarsy(["config", "check", "-c", dir, "--strict"]);
      expect(strict.stderr).toBe("");
      expect(strict.code).toBe(0);
      expect(strict.stdout).not.toContain("Not supported yet");
      expect(strict.stdout.trimEnd().endsWith("Configuration is valid.")).toBe(true);
    }
    const full = await tarsy([
      "config",
      "check",
      "-c",
      resolve(import.meta.dirname, "../../config/test/go-tarsy/full"),
    ]);
    expect(full.stdout).toContain(
      'mcp_servers.kubernetes-server.transport.args[5]: environment variable "KUBECONFIG" is not set; using an empty value',
    );
  });

  it("works on the built-ins alone when the directory has no files", async () => {
    const run = await tarsy(["config", "check", "-c", tempDir()], { GOOGLE_API_KEY: "key" });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("  kubernetes-agent-chain [built-in]");
    expect(run.stdout).toContain("LLM providers (5):");
  });

  it("prints every problem of a broken file and exits non-zero", async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, "tarsy.yaml"),
      `
memory: { enabled: true }
defaults:
  max_iterations: -2
mcp_servers:
  broken:
    transport: { type: stdio, command: "{{.BROKEN_BIN}}" }
agent_chains:
  k8s:
    alert_types: [kubernetes]
    label_map: triage
    stages:
      - name: s
        agents: [{ name: Nobody }]
`,
    );
    const run = await tarsy(["config", "check", "--config-dir", dir]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe("");
    const file = join(dir, "tarsy.yaml");
    expect(run.stdout).toContain(`Configuration in ${dir} is invalid: 5 problems`);
    expect(run.stdout).toContain(
      `error: ${file}:7: mcp_servers.broken.transport.command: is required for stdio transport (environment variable "BROKEN_BIN" is not set)`,
    );
    expect(run.stdout).toContain(
      `error: ${file}:4: defaults.max_iterations: Too small: expected number to be >=1`,
    );
    expect(run.stdout).toContain(
      `error: ${file}:14: agent_chains.k8s.stages[0].agents[0].name: unknown agent "Nobody"`,
    );
    // Warnings come with the errors.
    expect(run.stdout).toContain(
      `warning: ${file}: mcp_servers.broken.transport.command: environment variable "BROKEN_BIN" is not set; using an empty value`,
    );
    // Investigation memory is defaults.memory: a top-level `memory` is no setting of ours or
    // of the Go TARSy.
    expect(run.stdout).toContain(
      `warning: ${file}: memory: "memory" is not a known setting; ignored`,
    );
    // Each error carries its file line (a label map selector names a catalog entry).
    expect(run.stdout).toContain(
      `error: ${file}:11: agent_chains.k8s.label_map: unknown label map "triage" (label_maps has "builtin")`,
    );
    expect(run.stdout).toContain(
      `error: ${file}:10: agent_chains.k8s.alert_types[0]: alert type "kubernetes" is already handled by chain "kubernetes-agent-chain"`,
    );
  });

  it("refuses a policy that does not parse, naming the file, the path and the file's line (exit 1)", async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, "tarsy.yaml"),
      [
        "authorization:",
        "  enabled: true",
        "  projects: [prod]",
        "  policy: |",
        "    g, team-sre, role:sre",
        "    p, role:sre, sessions, read, prod/*",
      ].join("\n"),
    );
    const run = await tarsy(["config", "check", "--config-dir", dir]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(
      `error: ${join(dir, "tarsy.yaml")}:6: authorization.policy: line 2 (file line 6): unknown action "read"`,
    );
  });

  it("rejects unknown options with the usage (exit 2)", async () => {
    const run = await tarsy(["config", "check", "--bogus"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("tarsy config check: Unknown option '--bogus'");
    expect(run.stderr).toContain("Usage: tarsy config check [--config-dir DIR]");
  });
});

describe("tarsy", () => {
  it("lists its commands", async () => {
    const help = await tarsy(["--help"]);
    expect(help.code).toBe(0);
    // Each command on its own line, its description after the padding (the column widens
    // with the longest command).
    const commands: [string, string][] = [
      ["tarsy alert submit", "submit an alert from a file or stdin; prints the session id"],
      ["tarsy session list", "list sessions by status, alert type or text, a page at a time"],
      ["tarsy session show", "print a session's status, stages, analysis and token usage"],
      ["tarsy session watch", "follow a session's live timeline (streaming) until it ends"],
      ["tarsy session trace", "print a session's LLM and MCP interactions, or one of them in full"],
      ["tarsy session cancel", "cancel a running session (or its running chat answer)"],
      ["tarsy chat", "ask a follow-up question about a session and stream the answer"],
      ["tarsy events replay", "print stored events from NATS as JSON lines"],
      ["tarsy dlq list", "list dead letters"],
      ["tarsy dlq redrive", "publish a dead letter to its original subject again"],
      ["tarsy dlq discard", "remove a dead letter without redriving it"],
      ["tarsy config check", "validate the configuration and print a summary"],
      ["tarsy usage", "print LLM usage and estimated cost: totals, top models and sessions"],
      ["tarsy memory list", "list investigation memories, a page at a time"],
      ["tarsy memory show", "show one investigation memory"],
      ["tarsy memory deprecate", "deprecate an investigation memory"],
      ["tarsy memory delete", "delete an investigation memory"],
    ];
    for (const [command, does] of commands) {
      const line = help.stdout.split("\n").find((l) => l.startsWith(`  ${command}  `));
      expect(line, command).toBeDefined();
      expect(line?.slice(command.length + 2).trimStart(), command).toMatch(
        new RegExp(`^${does.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`),
      );
    }
    const none = await tarsy([]);
    expect(none.code).toBe(2);
    const unknown = await tarsy(["frobnicate"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('tarsy: unknown command "frobnicate"');
  });

  describe("--tools: each MCP server's tools with their class", () => {
    const REPO = resolve(import.meta.dirname, "../../..");
    const EVERYTHING = resolve(
      REPO,
      "services/mcp-gateway/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    );
    // The built-in kubernetes-server needs a cluster: disabled here, so it is not started.
    const servers = (extra = "") => `
mcp_servers:
  kubernetes-server:
    enabled: false
    transport: { type: stdio, command: "true" }
  everything:
    transport: { type: stdio, command: "${process.execPath}", args: ["${EVERYTHING}", "stdio"] }
    tools:
      get-sum: { mutating: true }
  cluster:
    transport: { type: stdio, command: "${process.execPath}", args: ["${REPO}/packages/stack/demo/cluster-mcp-server.mjs"] }
${extra}
agents:
  Investigator: { mcp_servers: [everything, cluster] }
agent_chains:
  main:
    alert_types: [Any]
    stages: [{ name: investigate, agents: [Investigator] }]
`;
    const dirWith = (yaml: string) => {
      const dir = tempDir();
      writeFileSync(join(dir, "tarsy.yaml"), yaml);
      return dir;
    };
    const env = { GOOGLE_API_KEY: "key", HOME: tmpdir() };

    it("starts each server, lists its tools as read-only or mutating and what said so (exit 0)", async () => {
      const run = await tarsy(
        ["config", "check", "--tools", "--config-dir", dirWith(servers())],
        env,
      );
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      const lines = run.stdout.split("\n");
      const line = (tool: string) => lines.find((l) => l.trim().startsWith(`${tool} `))?.trim();
      expect(run.stdout).toContain("MCP tools (mutating ones are offered to action agents only):");
      expect(run.stdout).toMatch(/ {2}cluster: 5 tools, 5 read-only, 0 mutating/);
      expect(line("echo")).toMatch(/^echo +read-only +\(its annotations\)$/);
      expect(line("get-sum")).toMatch(/^get-sum +mutating +\(mcp_servers\.<id>\.tools\)$/);
      expect(line("toggle-subscriber-updates")).toMatch(/mutating +\(its annotations\)$/);
      expect(line("get_secret")).toMatch(/read-only +\(its annotations\)$/);
      expect(run.stdout).toContain("Configuration is valid.");
    }, 120_000);

    it("as JSON, under mcp_tools", async () => {
      const run = await tarsy(
        ["config", "check", "--tools", "--output", "json", "--config-dir", dirWith(servers())],
        env,
      );
      expect(run.code).toBe(0);
      const body = JSON.parse(run.stdout) as {
        mcp_servers: unknown[];
        mcp_tools: {
          server: string;
          tools: { tool: string; mutating: boolean; mutating_source: string }[];
        }[];
      };
      expect(body.mcp_tools.map((s) => s.server).sort()).toEqual(["cluster", "everything"]);
      const everything = body.mcp_tools.find((s) => s.server === "everything");
      expect(everything?.tools.find((t) => t.tool === "get-sum")).toMatchObject({
        mutating: true,
        mutating_source: "config",
      });
      expect(everything?.tools.find((t) => t.tool === "echo")).toMatchObject({
        mutating: false,
        mutating_source: "annotations",
      });
    }, 120_000);

    it("a server that cannot be started is named, the others still listed (exit 1)", async () => {
      const yaml = servers(`  broken:
    transport: { type: stdio, command: "/nonexistent/mcp-server" }
`);
      const run = await tarsy(["config", "check", "--tools", "--config-dir", dirWith(yaml)], env);
      expect(run.code).toBe(1);
      expect(run.stdout).toMatch(/ {2}broken: could not be listed: /);
      expect(run.stdout).toMatch(/ {2}cluster: 5 tools/);
      expect(run.stdout).not.toContain("Configuration is valid.");
      expect(run.stdout).toContain("1 MCP server could not be listed: broken");
    }, 120_000);
  });
});
