import { createMcpGatewayClient } from "@tarsy/mcp-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  fixtureStdio,
  httpTransport,
  K8S_MASKING,
  serverConfig,
  startTestGateway,
  type TestGateway,
} from "./helpers.ts";
import { type FixtureHttpServer, serveFixtureHttp } from "./servers/fixture-server.ts";
import { CONFIGMAP_VALUES, PLANTED, plantedForms } from "./servers/fixtures.ts";

/** Tool results leave the gateway masked: planted secrets never, ConfigMap data always. */
describe("masking of every tool result before it leaves the gateway", { timeout: 90_000 }, () => {
  let gw: TestGateway;
  let http: FixtureHttpServer;
  const scope = { execution_id: "exec-masking", servers: ["secrets-stdio", "secrets-http"] };

  beforeAll(async () => {
    http = await serveFixtureHttp();
    gw = await startTestGateway([
      serverConfig("secrets-stdio", fixtureStdio(), K8S_MASKING),
      serverConfig("secrets-http", httpTransport("http", http.url), K8S_MASKING),
    ]);
  }, 60_000);
  afterAll(async () => {
    await gw?.stop();
    await http?.close();
  });

  const expectNoPlanted = (content: string) => {
    for (const secret of plantedForms()) expect(content).not.toContain(secret);
  };

  for (const server of ["secrets-stdio", "secrets-http"]) {
    it(`${server}: Secret YAML (multi-doc with a ConfigMap and the last-applied annotation)`, async () => {
      const client = createMcpGatewayClient(gw.testBus.bus);
      const reply = await client.callTool(scope, { name: `${server}.get_secret_yaml` });
      expect(reply.is_error).toBe(false);
      expectNoPlanted(reply.content);
      expect(reply.redactions).toBeGreaterThanOrEqual(3);
      expect(reply.content).toContain("kind: Secret");
      expect(reply.content).toContain("name: db-credentials");
      expect(reply.content).toContain(CONFIGMAP_VALUES.logLevel);
      expect(reply.content).toContain(CONFIGMAP_VALUES.featureFlags);
    });

    it(`${server}: Secret JSON (a List with a Secret and a ConfigMap; a SecretList)`, async () => {
      const client = createMcpGatewayClient(gw.testBus.bus);
      const reply = await client.callTool(scope, { name: `${server}__get_secret_json` });
      expectNoPlanted(reply.content);
      expect(reply.content).toContain("json-secret");
      expect(reply.content).toContain(CONFIGMAP_VALUES.logLevel);
      const list = await client.callTool(scope, { name: `${server}__get_secretlist_json` });
      expectNoPlanted(list.content);
      expect(list.content).toContain('"kind": "SecretList"');
      expect(list.redactions).toBeGreaterThanOrEqual(2);
    });

    it(`${server}: tokens, passwords, AWS keys, bearer tokens, private keys, certificates`, async () => {
      const client = createMcpGatewayClient(gw.testBus.bus);
      const reply = await client.callTool(scope, { name: `${server}.env_dump` });
      expectNoPlanted(reply.content);
      expect(reply.content).toContain("Deployment env dump:");
      expect(reply.content).toContain("done.");
      expect(reply.redactions).toBeGreaterThanOrEqual(6);
    });

    it(`${server}: ConfigMap data comes through untouched`, async () => {
      const client = createMcpGatewayClient(gw.testBus.bus);
      const reply = await client.callTool(scope, { name: `${server}.get_configmap` });
      expect(reply.content).toContain(`log_level: ${CONFIGMAP_VALUES.logLevel}`);
      expect(reply.content).toContain(`feature_flags: ${CONFIGMAP_VALUES.featureFlags}`);
      expect(reply.redactions).toBe(0);
    });
  }

  it("masks the arguments echoed back by a tool as well", async () => {
    const client = createMcpGatewayClient(gw.testBus.bus);
    const reply = await client.callTool(scope, {
      name: "secrets-stdio.echo_args",
      arguments: JSON.stringify({ note: `password: ${PLANTED.dbPassword}` }),
    });
    expect(reply.content).not.toContain(PLANTED.dbPassword);
  });
});
