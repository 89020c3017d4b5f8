import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const fixture = fileURLToPath(new URL("./fixtures/service.ts", import.meta.url));

/** Starts the fixture service as a real process, waits for its start line, sends SIGTERM. */
async function startAndTerminate(
  args: string[],
): Promise<{ code: number | null; lines: string[] }> {
  const child = spawn("node", ["--import", "tsx", fixture, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  let buffer = "";
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      buffer += chunk.toString();
      const parts = buffer.split("\n");
      buffer = parts.pop() ?? "";
      lines.push(...parts);
      if (parts.some((l) => l.includes('"msg":"service started"'))) resolve();
    });
    child.once("exit", (code) => reject(new Error(`exited early (${code})`)));
  });
  child.kill("SIGTERM");
  const [code] = await once(child, "exit");
  lines.push(...buffer.split("\n").filter(Boolean));
  return { code: code as number | null, lines };
}

describe("runService as a real process", () => {
  it("starts, logs JSON with pino, finishes in-flight work on SIGTERM and exits 0", async () => {
    const { code, lines } = await startAndTerminate(["300", "5000"]);
    expect(code).toBe(0);
    const records = lines.map((l) => JSON.parse(l) as { service: string; msg: string });
    expect(records.every((r) => r.service === "fixture-service")).toBe(true);
    expect(records.map((r) => r.msg)).toEqual([
      "service started",
      "shutting down",
      "in-flight work finished",
      "service stopped",
    ]);
  });

  it("exits 1 when shutdown takes longer than its timeout", async () => {
    const { code, lines } = await startAndTerminate(["3000", "200"]);
    expect(code).toBe(1);
    expect(lines.some((l) => l.includes("shutdown timed out"))).toBe(true);
  });
});
