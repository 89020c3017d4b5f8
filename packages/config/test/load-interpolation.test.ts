/**
 * Environment variables in config files, as the Go TARSy expands them: `{{.VAR}}` only; an
 * unset variable is an empty value with a warning; `${VAR}` stays as written.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { load, loadIssues, withoutLines } from "./helpers.ts";

describe("interpolation in files", () => {
  it("substitutes {{.VAR}} in values, typing unquoted ones like the YAML would", () => {
    const { config, warnings } = load(
      {
        tarsy: `
# Comments are not interpolated: {{.NOT_SET_ANYWHERE}}
defaults:
  max_iterations: {{.MAX_ITER}}
queue:
  session_timeout: {{.SESSION_TIMEOUT}}
mcp_servers:
  api:
    transport:
      type: http
      url: "https://{{.API_HOST}}:{{ .API_PORT }}/mcp"
      bearer_token: "{{.API_TOKEN}}"
      custom_headers:
        X-Env: {{.DEPLOY_ENV}}
  local:
    transport:
      type: stdio
      command: {{.MCP_BIN}}
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
        DEPLOY_ENV: "dev",
        MCP_BIN: "/usr/bin/my-mcp",
        KUBECONFIG: "/etc/kube/config",
        GOOGLE_API_KEY: "k",
      },
    );
    expect(warnings).toEqual([]);
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

  it("leaves the shell form and any other $ exactly as written, even when the variable is set", () => {
    const { config, warnings } = load(
      {
        tarsy: `
mcp_servers:
  kubernetes-server:
    transport:
      type: stdio
      command: "\${MCP_BIN}"
      args: ["--token", "p@ss$word", "\${USER_ID:-x}"]
    data_masking:
      custom_patterns:
        - pattern: "user_\${USER_ID}_.*"
          replacement: "[MASKED_USER]"
agents:
  KubernetesAgent:
    mcp_servers: [kubernetes-server]
    custom_instructions: "run: echo \${HOME} | grep $PATTERN"
`,
      },
      { MCP_BIN: "/bin/x", USER_ID: "42", HOME: "/root", PATTERN: "p", GOOGLE_API_KEY: "k" },
    );
    expect(warnings).toEqual([]);
    const server = config.mcpServers.get("kubernetes-server");
    // biome-ignore-start lint/suspicious/noTemplateCurlyInString: the literal placeholders are the expected text
    expect(server?.transport).toMatchObject({
      command: "${MCP_BIN}",
      args: ["--token", "p@ss$word", "${USER_ID:-x}"],
    });
    expect(server?.data_masking.custom_patterns[0]?.pattern).toBe("user_${USER_ID}_.*");
    expect(config.agents.get("KubernetesAgent")?.custom_instructions).toBe(
      "run: echo ${HOME} | grep $PATTERN",
    );
    // biome-ignore-end lint/suspicious/noTemplateCurlyInString: the literal placeholders are the expected text
  });

  it("loads a missing variable as an empty value, with a warning naming it and its path", () => {
    const { config, warnings, dir } = load({
      tarsy: `
mcp_servers:
  kubernetes-server:
    transport:
      type: stdio
      command: npx
      args: ["-y", "kubernetes-mcp-server", "--kubeconfig", "{{.KUBECONFIG}}"]
  monitoring:
    transport:
      type: http
      url: http://monitoring:8080/mcp
      bearer_token: "{{.MONITORING_TOKEN}}"
agents:
  KubernetesAgent:
    mcp_servers: [kubernetes-server, monitoring]
    custom_instructions: "Team {{.TEAM}}."
`,
      providers: `
llm_providers:
  proxy:
    type: openai
    model: gpt-5
    base_url: "{{.PROXY_URL}}"
`,
    });
    const file = join(dir, "tarsy.yaml");
    const empty = (variable: string) =>
      `environment variable "${variable}" is not set; using an empty value`;
    expect(config.mcpServers.get("kubernetes-server")?.transport).toMatchObject({
      args: ["-y", "kubernetes-mcp-server", "--kubeconfig", ""],
    });
    expect(config.mcpServers.get("monitoring")?.transport).not.toHaveProperty("bearer_token");
    expect(config.llmProviders.get("proxy")).not.toHaveProperty("base_url");
    expect(config.agents.get("KubernetesAgent")?.custom_instructions).toBe("Team .");
    expect(warnings).toEqual(
      expect.arrayContaining([
        {
          file,
          path: "mcp_servers.kubernetes-server.transport.args[3]",
          message: empty("KUBECONFIG"),
        },
        {
          file,
          path: "mcp_servers.monitoring.transport.bearer_token",
          message: empty("MONITORING_TOKEN"),
        },
        { file, path: "agents.KubernetesAgent.custom_instructions", message: empty("TEAM") },
        {
          file: join(dir, "llm-providers.yaml"),
          path: "llm_providers.proxy.base_url",
          message: empty("PROXY_URL"),
        },
      ]),
    );
  });

  it("reports a required field left empty by a missing variable where it is, naming the variable", () => {
    const issues = withoutLines(
      loadIssues({
        tarsy: `
mcp_servers:
  argocd:
    transport:
      type: http
      url: "{{.ARGOCD_URL}}"
  local:
    transport:
      type: stdio
      command: "{{.MCP_BIN}}"
`,
        providers: `
llm_providers:
  mine:
    type: openai
    model: "{{.MODEL}}"
`,
      }),
    );
    expect(issues).toEqual([
      {
        file: "tarsy.yaml",
        path: "mcp_servers.argocd.transport.url",
        message: 'is required for http transport (environment variable "ARGOCD_URL" is not set)',
      },
      {
        file: "tarsy.yaml",
        path: "mcp_servers.local.transport.command",
        message: 'is required for stdio transport (environment variable "MCP_BIN" is not set)',
      },
      {
        file: "llm-providers.yaml",
        path: "llm_providers.mine.model",
        message: 'must not be empty (environment variable "MODEL" is not set)',
      },
    ]);
  });

  it("keeps {{.SESSION_ID}} in custom headers and the cleanup URL for run time, nowhere else", () => {
    const { config, warnings, dir } = load(
      {
        tarsy: `
mcp_servers:
  cli:
    transport:
      type: http
      url: "https://cli-mcp-server:8443/mcp"
      custom_headers:
        X-Session-ID: "{{ .SESSION_ID }}"
        X-Team: "{{.TEAM}}"
      session_cleanup_url: "https://cli-mcp-server:8443/sessions/{{.SESSION_ID}}"
    instructions: "Session {{.SESSION_ID}}."
agents:
  KubernetesAgent:
    mcp_servers: [cli]
`,
      },
      { SESSION_ID: "from-the-environment", TEAM: "sre", GOOGLE_API_KEY: "k" },
    );
    const cli = config.mcpServers.get("cli");
    expect(cli?.transport).toEqual({
      type: "http",
      url: "https://cli-mcp-server:8443/mcp",
      verify_ssl: true,
      custom_headers: { "X-Session-ID": "{{.SESSION_ID}}", "X-Team": "sre" },
      session_cleanup_url: "https://cli-mcp-server:8443/sessions/{{.SESSION_ID}}",
    });
    expect(cli?.instructions).toBe("Session from-the-environment.");
    expect(warnings).toEqual([]);
    expect(dir).toBeTruthy();
  });
});
