import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type SystemConfigResponse, SystemConfigResponseSchema } from "@tarsy/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { conforms, type Harness, request, startHarness } from "./support.ts";

/** Every place a secret can sit in a config, each with its own recognisable value. */
const SECRETS = {
  PROVIDER_API_KEY: "sk-provider-key-4f1d9c",
  PROVIDER_URL_PASSWORD: "url-password-77ab01",
  PROVIDER_URL_KEY: "url-query-key-5e6f70",
  MCP_BEARER: "mcp-bearer-token-a1b2c3",
  MCP_HEADER_KEY: "mcp-header-key-d4e5f6",
  MCP_URL_TOKEN: "mcp-url-token-0a9b8c",
  MCP_ENV_TOKEN: "mcp-env-token-112233",
  MCP_ARG_TOKEN: "mcp-arg-token-445566",
};

const TARSY_YAML = `
mcp_servers:
  remote-tools:
    transport:
      type: http
      url: https://ops:{{.MCP_URL_TOKEN}}@mcp.example.com/mcp?token={{.MCP_URL_TOKEN}}
      bearer_token: {{.MCP_BEARER}}
      custom_headers:
        X-Api-Key: {{.MCP_HEADER_KEY}}
  local-tools:
    transport:
      type: stdio
      command: {{.NODE_BIN}}
      args: ["--token={{.MCP_ARG_TOKEN}}"]
      env:
        API_TOKEN: {{.MCP_ENV_TOKEN}}
agents:
  VaultAgent:
    description: Reads the vault
    mcp_servers: [remote-tools, local-tools]
agent_chains:
  vault-chain:
    alert_types: [VaultSealed]
    description: Vault sealed
    llm_provider: keyed-proxy
    stages:
      - name: investigate
        agents:
          - name: VaultAgent
`;

const PROVIDERS_YAML = `
llm_providers:
  keyed-proxy:
    type: openai-compatible
    model: gpt-vault-1
    api_key_env: PROVIDER_API_KEY
    base_url: https://llm:{{.PROVIDER_URL_PASSWORD}}@llm.example.com/v1?key={{.PROVIDER_URL_KEY}}
    max_tool_result_tokens: 1000
`;

describe("GET /api/v1/system/config", () => {
  let h: Harness;
  let configDir: string;
  const saved = process.env.PROVIDER_API_KEY;
  beforeAll(async () => {
    configDir = mkdtempSync(join(tmpdir(), "ingest-config-view-"));
    writeFileSync(join(configDir, "tarsy.yaml"), TARSY_YAML);
    writeFileSync(join(configDir, "llm-providers.yaml"), PROVIDERS_YAML);
    // The key's variable is set in the process too, as it is where llm-service runs.
    process.env.PROVIDER_API_KEY = SECRETS.PROVIDER_API_KEY;
    h = await startHarness({ configDir, configEnv: SECRETS });
  });
  afterAll(async () => {
    await h?.close();
    rmSync(configDir, { recursive: true, force: true });
    if (saved === undefined) delete process.env.PROVIDER_API_KEY;
    else process.env.PROVIDER_API_KEY = saved;
  });

  it("shows chains, agents and providers as resolved, naming the key's variable", async () => {
    const res = await request<SystemConfigResponse>(`${h.url}/api/v1/system/config`);
    expect(res.status).toBe(200);
    conforms(SystemConfigResponseSchema, res.body);
    expect(res.body.chains.find((c) => c.id === "vault-chain")).toMatchObject({
      alert_types: ["VaultSealed"],
      description: "Vault sealed",
      llm_provider: "keyed-proxy",
      chat_enabled: true,
      builtin: false,
      stages: [{ name: "investigate", agents: ["VaultAgent"], replicas: 1 }],
    });
    expect(res.body.agents.find((a) => a.name === "VaultAgent")).toMatchObject({
      mcp_servers: ["remote-tools", "local-tools"],
      builtin: false,
    });
    expect(res.body.llm_providers.find((p) => p.name === "keyed-proxy")).toEqual({
      name: "keyed-proxy",
      type: "openai-compatible",
      model: "gpt-vault-1",
      base_url: "https://llm.example.com/v1",
      api_key_env: "PROVIDER_API_KEY",
      credentials_env: null,
      builtin: false,
    });
    // Built-ins are listed too, resolved against the defaults.
    expect(res.body.chains.length).toBeGreaterThan(1);
    expect(res.body.defaults.llm_provider).not.toBe("");
  });

  it("never carries a secret's value, wherever the config holds one", async () => {
    // The config really holds them (so the check below could fail).
    const mcp = h.deps.config.mcpServers.get("remote-tools");
    expect(JSON.stringify(mcp)).toContain(SECRETS.MCP_BEARER);
    expect(h.deps.config.llmProviders.get("keyed-proxy")?.base_url).toContain(
      SECRETS.PROVIDER_URL_KEY,
    );
    const res = await fetch(`${h.url}/api/v1/system/config`);
    const text = await res.text();
    for (const [name, value] of Object.entries(SECRETS)) {
      expect(text, `${name} leaked`).not.toContain(value);
    }
  });
});
