/** Environment variables in config files: `{{.VAR}}` and `${VAR}`, missing and optional values. */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { load, loadIssues } from "./helpers.ts";

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
