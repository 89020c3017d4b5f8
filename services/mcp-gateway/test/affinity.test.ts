import { MCP_GATEWAY, mcpReplicaSubjectPrefix } from "@tarsy/contracts";
import { createMcpGatewayClient } from "@tarsy/mcp-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestBus,
  fixtureStdio,
  serverConfig,
  startTestGateway,
  type TestBus,
  type TestGateway,
} from "./helpers.ts";

type Who = { pid: number; session: string };

describe("replica affinity over the NATS service", { timeout: 90_000 }, () => {
  let testBus: TestBus;
  const replicas = new Map<string, TestGateway>();

  beforeAll(async () => {
    testBus = await createTestBus();
    const servers = [serverConfig("fx", fixtureStdio())];
    for (const id of ["replica-a", "replica-b"]) {
      replicas.set(id, await startTestGateway(servers, { testBus, replicaId: id }));
    }
  }, 90_000);
  afterAll(async () => {
    for (const r of replicas.values()) await r.gateway.stop().catch(() => undefined);
    await testBus?.cleanup();
  });

  it("is discoverable as a NATS service, one instance per replica", async () => {
    const a = replicas.get("replica-a")!;
    const msg = await (await testBus.raw()).request(
      `$SRV.INFO.tarsy-mcp-gateway.${a.gateway.service.id}`,
      undefined,
      { timeout: 2_000 },
    );
    const info = JSON.parse(new TextDecoder().decode(msg.data)) as {
      name: string;
      metadata: Record<string, string>;
      endpoints: Array<{ subject: string; queue_group?: string }>;
    };
    expect(info.name).toBe("tarsy-mcp-gateway");
    expect(info.metadata.replica_id).toBe("replica-a");
    const subjects = info.endpoints.map((e) => e.subject);
    const callTool = MCP_GATEWAY.methods.callTool.method;
    expect(subjects).toContain(`${testBus.prefix}.${MCP_GATEWAY.subjectPrefix}.${callTool}`);
    expect(subjects).toContain(
      `${testBus.prefix}.${mcpReplicaSubjectPrefix("replica-a")}.${callTool}`,
    );
  });

  it("an execution's calls stay on the replica that opened it; when it is gone, another opens it again", async () => {
    const client = createMcpGatewayClient(await testBus.connectAnother());
    const scope = { execution_id: "exec-affinity", servers: ["fx"] };
    const listed = await client.listTools(scope);
    const first = listed.replica.id;
    expect(["replica-a", "replica-b"]).toContain(first);
    expect(client.replicaOf("exec-affinity")).toBe(first);

    const whos: Who[] = [];
    for (let i = 0; i < 6; i++) {
      const reply = await client.callTool(scope, { name: "fx.whoami" });
      expect(reply.replica.id).toBe(first);
      whos.push(JSON.parse(reply.content) as Who);
    }
    expect(new Set(whos.map((w) => w.pid)).size).toBe(1);
    expect(replicas.get(first)!.gateway.executions.has("exec-affinity")).toBe(true);
    const other = first === "replica-a" ? "replica-b" : "replica-a";
    expect(replicas.get(other)!.gateway.executions.has("exec-affinity")).toBe(false);

    // The replica holding the execution goes away.
    await replicas.get(first)!.gateway.stop();
    const moved = await client.callTool(scope, { name: "fx.whoami" });
    expect(moved.is_error).toBe(false);
    expect(moved.replica.id).toBe(other);
    expect((JSON.parse(moved.content) as Who).pid).not.toBe(whos[0]?.pid);
    expect(client.replicaOf("exec-affinity")).toBe(other);
    expect(replicas.get(other)!.gateway.executions.has("exec-affinity")).toBe(true);

    const released = await client.release("exec-affinity");
    expect(released).toMatchObject({ released: true, replica: { id: other } });
    expect(replicas.get(other)!.gateway.executions.has("exec-affinity")).toBe(false);
  }, 90_000);
});
