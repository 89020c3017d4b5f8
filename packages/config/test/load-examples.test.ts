/** The documented example files in deploy/config. */
import { copyFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/index.ts";
import { configDir } from "./helpers.ts";

const EXAMPLES = resolve(import.meta.dirname, "../../../deploy/config");

describe("the example files", () => {
  it("load, validate and define what they document", () => {
    const dir = configDir();
    copyFileSync(join(EXAMPLES, "tarsy.yaml.example"), join(dir, "tarsy.yaml"));
    copyFileSync(join(EXAMPLES, "llm-providers.yaml.example"), join(dir, "llm-providers.yaml"));
    const { config, warnings } = loadConfig({
      configDir: dir,
      env: {
        GOOGLE_API_KEY: "k",
        MONITORING_TOKEN: "t",
        MONITORING_STS_CLIENT_SECRET: "s",
        KUBECONFIG: "/etc/kube/config",
      },
    });
    expect(warnings).toEqual([]);
    expect(config.mcpServers.get("monitoring-server")?.auth).toMatchObject({
      mode: "token_exchange",
      fallback_to_shared: false,
      token_exchange: { client_id: "tarsy-monitoring-exchange", client_secret: "s" },
    });
    expect(config.authorization).toMatchObject({
      enabled: false,
      projects: ["prod-incidents", "security-investigations"],
      trusted_proxies: ["127.0.0.1", "10.0.0.0/8"],
    });
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
      "cli-mcp-server",
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
      wrap_up_reserve_ms: 180_000,
      resume_interrupted: true,
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
