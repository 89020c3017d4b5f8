import { randomBytes } from "node:crypto";
import { type Bus, connectBus, RpcInvalidRequestError, RpcNoRespondersError } from "@tarsy/bus";
import { createLogger } from "@tarsy/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMcpGatewayClient } from "../src/index.ts";

/** Behaviour with no gateway on the prefix (the gateway's own tests cover the happy paths). */
describe("createMcpGatewayClient without a gateway", () => {
  let bus: Bus;
  beforeAll(async () => {
    bus = await connectBus({
      servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222",
      name: "mcp-client-test",
      logger: createLogger({ service: "mcp-client-test", level: "silent" }),
      prefix: `t${randomBytes(4).toString("hex")}`,
    });
  });
  afterAll(async () => {
    await bus.close();
  });

  it("refuses an invalid scope before sending anything", async () => {
    const client = createMcpGatewayClient(bus);
    await expect(
      client.listTools({ execution_id: "", servers: ["bad server id"] }),
    ).rejects.toBeInstanceOf(RpcInvalidRequestError);
  });

  it("says at once that no gateway answers, and remembers no replica", async () => {
    const client = createMcpGatewayClient(bus);
    const started = Date.now();
    await expect(
      client.callTool({ execution_id: "e1", servers: ["s"] }, { name: "s.t" }),
    ).rejects.toBeInstanceOf(RpcNoRespondersError);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(client.replicaOf("e1")).toBeUndefined();
    await expect(client.health()).rejects.toBeInstanceOf(RpcNoRespondersError);
    // Releasing an execution no replica holds is a no-op.
    await expect(client.release("e1")).resolves.toBeUndefined();
  });
});
