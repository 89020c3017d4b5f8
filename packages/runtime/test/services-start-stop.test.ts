import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../..", import.meta.url));

/** Starts a service as a real process, waits for its start log line, sends SIGTERM. */
async function startAndTerminate(
  service: string,
): Promise<{ code: number | null; lines: string[] }> {
  const child = spawn("node", ["--import", "tsx", "src/main.ts"], {
    cwd: `${root}/services/${service}`,
    env: { ...process.env, LOG_LEVEL: "info" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  let buffer = "";
  const started = new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      buffer += chunk.toString();
      const parts = buffer.split("\n");
      buffer = parts.pop() ?? "";
      lines.push(...parts);
      if (parts.some((l) => l.includes('"msg":"service started"'))) resolve();
    });
    child.once("exit", (code) => reject(new Error(`${service} exited early (${code})`)));
  });
  await started;
  child.kill("SIGTERM");
  const [code] = await once(child, "exit");
  lines.push(...buffer.split("\n").filter(Boolean));
  return { code: code as number | null, lines };
}

describe("service skeletons", () => {
  for (const service of ["ingest-api", "orchestrator", "agent-runner", "stream-relay"]) {
    it(`${service} starts, logs JSON with pino, and exits 0 on SIGTERM`, async () => {
      const { code, lines } = await startAndTerminate(service);
      expect(code).toBe(0);
      const records = lines.map((l) => JSON.parse(l) as { service: string; msg: string });
      expect(records.every((r) => r.service === service)).toBe(true);
      expect(records.map((r) => r.msg)).toEqual(
        expect.arrayContaining(["service started", "shutting down", "service stopped"]),
      );
    });
  }
});
