import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const serviceDir = fileURLToPath(new URL("..", import.meta.url));

/** A config whose default fallback list names a provider keyed by BACKUP_KEY. */
const configDir = mkdtempSync(join(tmpdir(), "llm-credentials-"));
writeFileSync(
  join(configDir, "llm-providers.yaml"),
  `llm_providers:
  backup:
    type: anthropic
    model: claude-backup
    api_key_env: BACKUP_KEY
`,
);
writeFileSync(
  join(configDir, "tarsy.yaml"),
  `defaults:
  fallback_providers:
    - { provider: backup, backend: langchain }
mcp_servers:
  argocd:
    transport:
      type: http
      url: https://argocd.example/mcp
      # Only mcp-gateway has this token: llm-service must not care.
      bearer_token: \${ARGOCD_TOKEN}
`,
);
afterAll(() => rmSync(configDir, { recursive: true, force: true }));

/** Runs llm-service (src/main.ts) until it listens or exits; returns what happened. */
async function start(extraEnv: Record<string, string>) {
  const child = spawn("node", ["--import", "tsx", "src/main.ts"], {
    cwd: serviceDir,
    env: {
      PATH: process.env.PATH,
      LOG_LEVEL: "info",
      LLM_SERVICE_HOST: "127.0.0.1",
      LLM_SERVICE_PORT: "0",
      METRICS_HOST: "127.0.0.1",
      METRICS_PORT: "0",
      TARSY_CONFIG_DIR: configDir,
      ...extraEnv,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const listening = new Promise<"listening">((resolve) => {
    child.stdout.on("data", (data: Buffer) => {
      output += data.toString();
      if (output.includes('"llm-service listening"')) resolve("listening");
    });
  });
  child.stderr.on("data", (data: Buffer) => {
    output += data.toString();
  });
  const exited = once(child, "exit").then(([code]) => ({ code: code as number | null }));
  const first = await Promise.race([listening, exited]);
  if (first === "listening") {
    child.kill("SIGTERM");
    await exited;
  }
  return { first, output };
}

describe("llm-service checks the fallback providers' credentials at startup", () => {
  it("refuses to start while a fallback provider's key variable is unset, naming it", async () => {
    const { first, output } = await start({});
    expect(first).toEqual({ code: 1 });
    expect(output).toContain(
      'environment variable BACKUP_KEY is not set: fallback LLM provider "backup" reads its API key from it',
    );
    expect(output).not.toContain('"llm-service listening"');
  });

  it("starts once it is set; other services' variables are not its concern", async () => {
    const { first } = await start({ BACKUP_KEY: "sk-backup-set" });
    expect(first).toBe("listening");
  });
});
