import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type DefaultToolsResponse,
  DefaultToolsResponseSchema,
  type SystemConfigResponse,
  SystemConfigResponseSchema,
} from "@tarsy/contracts";
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
  MCP_ARG_PASSWORD: "mcp-arg-password-778899",
  MCP_ARG_AUTH_TOKEN: "mcp-arg-auth-token-aabbcc",
  MCP_ARG_API_KEY: "mcp-arg-api-key-ddeeff",
  MCP_ARG_PAIR: "mcp-arg-pair-010203",
  MCP_ARG_OPENAI: "sk-proj-0a1b2c3d4e5f",
  MCP_AUTH_HEADER: "Bearer mcp-auth-header-040506",
  MCP_TOKEN_HEADER: "mcp-token-header-070809",
  MCP_SECRET_HEADER: "mcp-secret-header-0a0b0c",
  MCP_CLEANUP_KEY: "mcp-cleanup-key-0d0e0f",
  SLACK_BOT_TOKEN: "xoxb-slack-bot-token-101112",
  WEBHOOK_PATH_TOKEN: "webhook-path-token-131415",
  WEBHOOK_QUERY_KEY: "webhook-query-key-161718",
  WEBHOOK_SECRET: "webhook-signing-secret-192021",
};

const TARSY_YAML = `
system:
  slack: { enabled: true, channel: C0OPS }
  notifications:
    webhooks:
      - url: https://hooks.example.com/services/{{.WEBHOOK_PATH_TOKEN}}?key={{.WEBHOOK_QUERY_KEY}}
        events: [failed]
        secret_env: WEBHOOK_SECRET
  retention: { session_retention_days: 90, hard_delete_after: 48h }
  cost_estimation:
    model_rates: { gpt-vault-1: { input_per_million: 2, output_per_million: 8 } }
    promotions:
      - { id: launch, model: gpt-vault-1, end: 2027-01-01, input_per_million: 1, output_per_million: 4 }
fallback_lists:
  vault-walk:
    - llm_provider: gemini-tools
      llm_backend: google-native
    - llm_provider: keyed-proxy
defaults:
  llm_provider: gemini-tools
  fallback_list: vault-walk
  summarization: { llm_provider: gemini-tools, fallback_list: vault-walk }
  agents:
    VaultAgent: { llm_provider: keyed-proxy, fallback_list: vault-walk }
mcp_servers:
  remote-tools:
    transport:
      type: http
      url: https://ops:{{.MCP_URL_TOKEN}}@mcp.example.com/mcp?token={{.MCP_URL_TOKEN}}
      bearer_token: {{.MCP_BEARER}}
      custom_headers:
        X-Api-Key: {{.MCP_HEADER_KEY}}
        Authorization: "{{.MCP_AUTH_HEADER}}"
        X-Vault-Token: {{.MCP_TOKEN_HEADER}}
        X-Client-Secret: {{.MCP_SECRET_HEADER}}
        X-Tenant: payments
        X-Session: "{{.SESSION_ID}}"
      session_cleanup_url: https://mcp.example.com/sessions/{{.SESSION_ID}}?key={{.MCP_CLEANUP_KEY}}
  local-tools:
    transport:
      type: stdio
      command: {{.NODE_BIN}}
      args:
        - "--token={{.MCP_ARG_TOKEN}}"
        - "--password"
        - "{{.MCP_ARG_PASSWORD}}"
        - "--auth-token"
        - "{{.MCP_ARG_AUTH_TOKEN}}"
        - "--api-key={{.MCP_ARG_API_KEY}}"
        - "DB_PASSWORD={{.MCP_ARG_PAIR}}"
        - "{{.MCP_ARG_OPENAI}}"
        - "--read-only"
        - "--namespace"
        - "payments"
      env:
        API_TOKEN: {{.MCP_ENV_TOKEN}}
        LOG_LEVEL: debug
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
            fallback_providers: [{ provider: keyed-proxy }]
`;

const PROVIDERS_YAML = `
llm_providers:
  keyed-proxy:
    type: openai-compatible
    model: gpt-vault-1
    api_key_env: PROVIDER_API_KEY
    base_url: https://llm:{{.PROVIDER_URL_PASSWORD}}@llm.example.com/v1?key={{.PROVIDER_URL_KEY}}
    max_tool_result_tokens: 1000
  gemini-tools:
    type: google
    model: gemini-2.5-flash
    max_tool_result_tokens: 1000
    native_tools:
      google_search: false
      code_execution: true
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
      scoring_enabled: false,
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
      project_env: null,
      location_env: null,
      native_tools: null,
      reasoning_effort: null,
      builtin: false,
    });
    // Prompt caching is on unless the config turns it off.
    expect(res.body.prompt_caching).toEqual({ enabled: true });
    // Built-ins are listed too, resolved against the defaults.
    expect(res.body.chains.length).toBeGreaterThan(1);
    expect(res.body.defaults.llm_provider).not.toBe("");
  });

  it("shows the fallback_lists catalog, defaults.agents and every selector as written", async () => {
    const res = await request<SystemConfigResponse>(`${h.url}/api/v1/system/config`);
    conforms(SystemConfigResponseSchema, res.body);
    expect(res.body.fallback_lists).toEqual([
      {
        name: "vault-walk",
        entries: [
          { llm_provider: "gemini-tools", llm_backend: "google-native" },
          { llm_provider: "keyed-proxy", llm_backend: "langchain" },
        ],
      },
    ]);
    expect(res.body.defaults.agents).toEqual([
      {
        name: "VaultAgent",
        llm_provider: "keyed-proxy",
        llm_backend: null,
        fallback_list: "vault-walk",
      },
    ]);
    expect(res.body.defaults.summarization).toEqual({
      llm_provider: "gemini-tools",
      llm_backend: null,
      fallback_list: "vault-walk",
    });
    expect(res.body.fallback_selectors).toEqual([
      { path: "defaults.fallback_list", fallback_list: "vault-walk", fallback_providers: null },
      {
        path: "defaults.summarization.fallback_list",
        fallback_list: "vault-walk",
        fallback_providers: null,
      },
      {
        path: "defaults.agents.VaultAgent.fallback_list",
        fallback_list: "vault-walk",
        fallback_providers: null,
      },
      {
        path: "agent_chains.vault-chain.stages[0].agents[0].fallback_providers",
        fallback_list: null,
        fallback_providers: [{ provider: "keyed-proxy", backend: "langchain" }],
      },
    ]);
  });

  it("shows MCP transports redacted: *** for credential arguments and headers, variable names only, bearer_token_set", async () => {
    const res = await request<SystemConfigResponse>(`${h.url}/api/v1/system/config`);
    const remote = res.body.mcp_servers.find((s) => s.id === "remote-tools");
    expect(remote?.transport).toMatchObject({
      type: "http",
      url: "https://mcp.example.com/mcp",
      bearer_token_set: true,
      custom_headers: {
        "X-Api-Key": "***",
        Authorization: "***",
        "X-Vault-Token": "***",
        "X-Client-Secret": "***",
        "X-Tenant": "payments",
        "X-Session": "{{.SESSION_ID}}",
      },
      session_cleanup_url: "https://mcp.example.com/sessions/{{.SESSION_ID}}",
    });
    expect(remote?.transport.custom_header_keys).toEqual([
      "Authorization",
      "X-Api-Key",
      "X-Client-Secret",
      "X-Session",
      "X-Tenant",
      "X-Vault-Token",
    ]);
    const local = res.body.mcp_servers.find((s) => s.id === "local-tools");
    expect(local?.transport).toMatchObject({
      type: "stdio",
      command: process.execPath,
      args: [
        "--token=***",
        "--password",
        "***",
        "--auth-token",
        "***",
        "--api-key=***",
        "DB_PASSWORD=***",
        "***",
        "--read-only",
        "--namespace",
        "payments",
      ],
      env_keys: ["API_TOKEN", "LOG_LEVEL"],
      bearer_token_set: false,
    });
    expect(JSON.stringify(local)).not.toContain("debug"); // env values never appear
    // A server without a bearer token says so.
    const builtin = res.body.mcp_servers.find((s) => s.id === "kubernetes-server");
    expect(builtin?.transport.bearer_token_set).toBe(false);
  });

  it("shows notifications, retention and cost estimation, a webhook by its origin only", async () => {
    const res = await request<SystemConfigResponse>(`${h.url}/api/v1/system/config`);
    expect(res.body.notifications).toEqual({
      slack: { enabled: true, channel: "C0OPS", token_env: "SLACK_BOT_TOKEN" },
      webhooks: [{ origin: "https://hooks.example.com", events: ["failed"], signed: true }],
    });
    expect(res.body.retention).toMatchObject({
      session_retention_days: 90,
      hard_delete_after_ms: 48 * 3600_000,
    });
    expect(res.body.cost_estimation).toEqual({
      enabled: true,
      model_rates: { "gpt-vault-1": { input_per_million: 2, output_per_million: 8 } },
      promotions: [
        {
          id: "launch",
          model: "gpt-vault-1",
          start: null,
          end: "2027-01-01T00:00:00.000Z",
          input_per_million: 1,
          output_per_million: 4,
        },
      ],
    });
  });

  it("never carries a secret's value, wherever the config holds one", async () => {
    // The config really holds them (so the check below could fail).
    const mcp = h.deps.config.mcpServers.get("remote-tools");
    expect(JSON.stringify(mcp)).toContain(SECRETS.MCP_BEARER);
    expect(h.deps.config.system.notifications.webhooks[0]?.url).toContain(
      SECRETS.WEBHOOK_PATH_TOKEN,
    );
    expect(h.deps.config.llmProviders.get("keyed-proxy")?.base_url).toContain(
      SECRETS.PROVIDER_URL_KEY,
    );
    const res = await fetch(`${h.url}/api/v1/system/config`);
    const text = await res.text();
    for (const [name, value] of Object.entries(SECRETS)) {
      expect(text, `${name} leaked`).not.toContain(value);
    }
  });

  it("GET /system/default-tools: the default provider's native tools, and each provider's", async () => {
    const res = await request<DefaultToolsResponse>(`${h.url}/api/v1/system/default-tools`);
    expect(res.status).toBe(200);
    conforms(DefaultToolsResponseSchema, res.body);
    // The default provider's config: unnamed tools are off.
    expect(res.body.native_tools).toEqual({
      google_search: false,
      code_execution: true,
      url_context: false,
    });
    expect(res.body.source_provider).toBe("gemini-tools");
    const byName = new Map(res.body.providers.map((p) => [p.name, p]));
    expect(byName.get("keyed-proxy")).toEqual({
      name: "keyed-proxy",
      type: "openai-compatible",
      native_tools: {},
    });
    expect(byName.get("google-default")?.native_tools).toEqual({
      google_search: true,
      code_execution: false,
      url_context: true,
    });
  });
});
