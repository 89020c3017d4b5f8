import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMcpGatewayClient } from "@tarsy/mcp-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  fixtureStdio,
  httpTransport,
  serverConfig,
  startTestGateway,
  type TestGateway,
} from "./helpers.ts";
import { type FixtureHttpServer, serveFixtureHttp } from "./servers/fixture-server.ts";

describe("replies near the NATS max payload; HTTP auth, headers and TLS", {
  timeout: 90_000,
}, () => {
  let gw: TestGateway;
  const servers: FixtureHttpServer[] = [];
  let certDir: string;

  beforeAll(async () => {
    certDir = mkdtempSync(join(tmpdir(), "tarsy-mcp-tls-"));
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "key.pem",
        "-out",
        "cert.pem",
        "-days",
        "1",
        "-subj",
        "/CN=127.0.0.1",
      ],
      { cwd: certDir, stdio: "ignore" },
    );
    const tls = {
      key: readFileSync(join(certDir, "key.pem"), "utf8"),
      cert: readFileSync(join(certDir, "cert.pem"), "utf8"),
    };
    const bearer = await serveFixtureHttp(0, {
      requireBearer: "test-bearer-token",
      requireHeader: ["x-tenant", "blue"],
    });
    const https = await serveFixtureHttp(0, { tls });
    servers.push(bearer, https);
    gw = await startTestGateway(
      [
        serverConfig("fx", fixtureStdio()),
        serverConfig(
          "authed",
          httpTransport("http", bearer.url, {
            bearer_token: "test-bearer-token",
            custom_headers: { "x-tenant": "blue" },
          }),
        ),
        serverConfig(
          "no-token",
          httpTransport("http", bearer.url, { custom_headers: { "x-tenant": "blue" } }),
        ),
        serverConfig(
          "tls-unverified",
          httpTransport("http", https.url, { verify_ssl: false, timeout_ms: 5_000 }),
        ),
        serverConfig("tls-verified", httpTransport("http", https.url, { verify_ssl: true })),
      ],
      {},
    );
  }, 60_000);
  afterAll(async () => {
    await gw?.stop();
    for (const s of servers) await s.close();
    rmSync(certDir, { recursive: true, force: true });
  });

  it("cuts an output above the max payload below it, with a visible marker", async () => {
    const client = createMcpGatewayClient(gw.testBus.bus);
    const maxPayload = (await gw.testBus.raw()).info?.max_payload ?? 0;
    expect(maxPayload).toBeGreaterThan(0);
    const reply = await client.callTool(
      { execution_id: "exec-big", servers: ["fx"] },
      { name: "fx.big", arguments: `bytes: ${maxPayload * 2}` },
    );
    expect(reply.truncated).toBe(true);
    expect(reply.is_error).toBe(false);
    expect(reply.content).toMatch(/\[TRUNCATED by mcp-gateway: the tool output was \d+ bytes/);
    expect(reply.content.startsWith("xxxxxxxx")).toBe(true);
    const size = new TextEncoder().encode(JSON.stringify(reply)).length;
    expect(size).toBeLessThan(maxPayload);
    expect(size).toBeGreaterThan(maxPayload * 0.9);

    const small = await client.callTool(
      { execution_id: "exec-big", servers: ["fx"] },
      { name: "fx.big", arguments: "bytes: 1000" },
    );
    expect(small).toMatchObject({ truncated: false, content: "x".repeat(1000) });
    await client.release("exec-big");
  }, 60_000);

  it("sends the bearer token and custom headers; without the token the server is unavailable", async () => {
    const client = createMcpGatewayClient(gw.testBus.bus);
    const scope = { execution_id: "exec-auth", servers: ["authed", "no-token"] };
    const listed = await client.listTools(scope);
    expect(listed.tools.some((t) => t.name === "authed.whoami")).toBe(true);
    expect(Object.keys(listed.failed_servers)).toEqual(["no-token"]);
    expect(listed.failed_servers["no-token"]).toMatch(/401|unauthorized/i);
    const reply = await client.callTool(scope, { name: "authed.whoami" });
    expect(reply.is_error).toBe(false);
    const health = await client.health();
    expect(health.ready).toBe(false);
    expect(health.not_ready_reason).toContain("no-token");
    await client.release("exec-auth");
  });

  it("verify_ssl: false accepts a self-signed certificate; true refuses it", async () => {
    const client = createMcpGatewayClient(gw.testBus.bus);
    const scope = { execution_id: "exec-tls", servers: ["tls-unverified", "tls-verified"] };
    const listed = await client.listTools(scope);
    expect(listed.tools.some((t) => t.name === "tls-unverified.whoami")).toBe(true);
    expect(listed.failed_servers["tls-verified"]).toMatch(/certificate|self.signed|fetch failed/i);
    const reply = await client.callTool(scope, { name: "tls-verified.whoami" });
    expect(reply.is_error).toBe(true);
    await client.release("exec-tls");
  });
});
