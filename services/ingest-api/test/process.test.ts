import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { createTestBus, createTestDatabase, type TestBus, type TestDatabase } from "@tarsy/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONFIG_ENV } from "./gateway-process.ts";
import { CONFIG_DIR, eventually, request } from "./support.ts";

const SERVICE_DIR = fileURLToPath(new URL("..", import.meta.url));
const TSX_BIN = fileURLToPath(new URL("../../../node_modules/.bin/tsx", import.meta.url));

describe("the ingest-api process (src/main.ts)", { timeout: 90_000 }, () => {
  let database: TestDatabase;
  let nats: TestBus;
  let child: ChildProcess | undefined;
  beforeAll(async () => {
    database = await createTestDatabase();
    nats = await createTestBus();
  });
  afterAll(async () => {
    if (child && child.exitCode === null) child.kill("SIGKILL");
    await nats?.cleanup();
    await database?.drop();
  });

  it("serves the API from its environment, never logs a secret, and stops on SIGTERM", async () => {
    child = spawn(TSX_BIN, ["src/main.ts"], {
      cwd: SERVICE_DIR,
      env: {
        ...process.env,
        ...CONFIG_ENV,
        PORT: "0",
        HOST: "127.0.0.1",
        DATABASE_URL: database.url,
        TARSY_SUBJECT_PREFIX: nats.prefix,
        TARSY_STREAM_SUFFIX: nats.streamSuffix,
        TARSY_CONFIG_DIR: CONFIG_DIR,
        ALERTMANAGER_BEARER_TOKEN: "am-secret-token-123",
        LOG_LEVEL: "debug",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout?.on("data", (d: Buffer) => {
      output += d.toString();
    });
    child.stderr?.on("data", (d: Buffer) => {
      output += d.toString();
    });
    await eventually(
      () => output.includes("http server listening") || child?.exitCode !== null,
      60_000,
    );
    const listening = output
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { msg: string; port?: number })
      .find((r) => r.msg === "http server listening");
    expect(listening?.port, output).toBeGreaterThan(0);
    const url = `http://127.0.0.1:${listening?.port}`;

    const accepted = await request<{ session_id: string }>(`${url}/api/v1/alerts`, {
      body: { data: { password: "hunter2-s3cr3t", pod: "api-1" } },
    });
    expect(accepted.status).toBe(202);
    const detail = await request<{ status: string; alert_data: string }>(
      `${url}/api/v1/sessions/${accepted.body.session_id}`,
    );
    expect(detail.body.status).toBe("pending");
    expect(detail.body.alert_data).not.toContain("hunter2-s3cr3t");
    const unauthorized = await request(`${url}/api/v1/alerts/alertmanager`, {
      body: { status: "firing", alerts: [] },
      headers: { authorization: "Bearer wrong" },
    });
    expect(unauthorized.status).toBe(401);

    const exited = once(child, "exit");
    child.kill("SIGTERM");
    const [code] = await exited;
    expect(code).toBe(0);
    const messages = output
      .split("\n")
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { msg: string }).msg);
    expect(messages).toEqual(expect.arrayContaining(["service started", "service stopped"]));
    expect(output).not.toContain("hunter2-s3cr3t");
    expect(output).not.toContain("am-secret-token-123");
  });
});
