import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createLlmClient, type LlmClient } from "@tarsy/llm-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeProvider, respondJson, respondSse, startFakeProvider } from "./fakes/http.ts";
import { openAiError, openAiStream } from "./fakes/openai.ts";
import { baseInput, collect, errorOf, textOf } from "./harness.ts";

const serviceDir = fileURLToPath(new URL("..", import.meta.url));
const KEY = "sk-live-process-test-5555666677778888";

let child: ChildProcess;
const lines: string[] = [];
let client: LlmClient;
let fake: FakeProvider;

/** Starts llm-service as a real process (src/main.ts, env parsed by env.ts). */
beforeAll(async () => {
  fake = await startFakeProvider();
  const dir = mkdtempSync(join(tmpdir(), "llm-script-"));
  const scriptPath = join(dir, "script.yaml");
  writeFileSync(scriptPath, "- text: hello from the script file\n");
  child = spawn("node", ["--import", "tsx", "src/main.ts"], {
    cwd: serviceDir,
    env: {
      PATH: process.env.PATH,
      LOG_LEVEL: "debug",
      LLM_SERVICE_HOST: "127.0.0.1",
      LLM_SERVICE_PORT: "0",
      METRICS_HOST: "127.0.0.1",
      METRICS_PORT: "0",
      LLM_SCRIPT_PATH: scriptPath,
      LLM_RETRY_BASE_DELAY_MS: "5",
      TEST_OPENAI_KEY: KEY,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let buffer = "";
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout?.on("data", (data: Buffer) => {
      buffer += data.toString();
      const parts = buffer.split("\n");
      buffer = parts.pop() ?? "";
      lines.push(...parts);
      for (const line of parts) {
        const record = JSON.parse(line) as { msg: string; port?: number };
        if (record.msg === "llm-service listening" && record.port) resolve(record.port);
      }
    });
    child.stderr?.on("data", (data: Buffer) => lines.push(data.toString()));
    child.once("exit", (code) =>
      reject(new Error(`llm-service exited early (${code}): ${lines.join("\n")}`)),
    );
  });
  client = createLlmClient({ address: `127.0.0.1:${port}` });
});

afterAll(async () => {
  client?.close();
  if (child && child.exitCode === null) child.kill("SIGKILL");
  await fake.close();
});

describe("llm-service as a process", () => {
  it("serves health, the script file, and a provider call, never logging the API key", async () => {
    expect(await client.health()).toBe("SERVING");
    expect(
      textOf(
        await collect(client.generate(baseInput({ provider: "scripted", backend: "scripted" }))),
      ),
    ).toBe("hello from the script file");

    const config = {
      provider: "openai",
      model: "gpt-fake",
      apiKeyEnv: "TEST_OPENAI_KEY",
      baseUrl: `${fake.url}/v1`,
    };
    fake.enqueue(respondSse(openAiStream({ text: ["fine"], usage: { prompt: 1, completion: 1 } })));
    expect(textOf(await collect(client.generate(baseInput(config))))).toBe("fine");
    expect(fake.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);

    // The provider echoes the key in its 401 message; neither the chunk nor the logs may.
    fake.enqueue(
      respondJson(401, openAiError("invalid_api_key", `Incorrect API key provided: ${KEY}`)),
    );
    const failed = await collect(client.generate(baseInput(config)));
    expect(errorOf(failed)).toMatchObject({ code: "auth", retryable: false });
    expect(JSON.stringify(failed)).not.toContain(KEY);

    // The ops server: live, ready while gRPC health says SERVING, the failure counted.
    const ops = lines
      .filter((l) => l.includes('"ops server listening'))
      .map((l) => (JSON.parse(l) as { url: string }).url)[0];
    expect((await fetch(`${ops}/health`)).status).toBe(200);
    const ready = await fetch(`${ops}/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({
      status: "ready",
      checks: { grpc: { status: "ok" } },
    });
    const metrics = await (await fetch(`${ops}/metrics`)).text();
    expect(metrics).toContain(
      'tarsy_llm_errors_total{provider="openai",model="gpt-fake",code="auth",service="llm-service"} 1',
    );
    expect(metrics).not.toContain('provider="scripted"');

    child.kill("SIGTERM");
    const [code] = await once(child, "exit");
    expect(code).toBe(0);
    const records = lines
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records.map((r) => r.msg)).toEqual(
      expect.arrayContaining([
        "llm-service listening",
        "generate finished",
        "generate failed",
        "service stopped",
      ]),
    );
    const failure = records.find((r) => r.msg === "generate failed");
    expect(failure).toMatchObject({
      session_id: "sess-1",
      execution_id: "exec-1",
      provider: "openai",
      code: "auth",
    });
    expect(lines.join("\n")).not.toContain(KEY);
    expect(lines.join("\n")).toContain("[REDACTED]"); // the echoed key was scrubbed, not dropped silently
  });
});
