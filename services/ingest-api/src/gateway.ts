import type { Bus } from "@tarsy/bus";
import { MCP_GATEWAY, type McpGatewayMethodKey } from "@tarsy/contracts";
import type { z } from "zod";
import type { GatewayClient } from "./deps.ts";

export class GatewayError extends Error {
  readonly code = "gateway_error" as const;
}

type Reply<K extends McpGatewayMethodKey> = z.infer<(typeof MCP_GATEWAY.methods)[K]["reply"]>;

/**
 * The mcp-gateway's read-only methods over NATS request/reply (shared subjects, any
 * replica answers). Replies are validated with the contracts schemas.
 */
export function createGatewayClient(bus: Bus, timeoutMs: number): GatewayClient {
  async function call<K extends "health" | "warnings" | "serverTools">(key: K): Promise<Reply<K>> {
    const def = MCP_GATEWAY.methods[key];
    const subject = bus.subject(`${MCP_GATEWAY.subjectPrefix}.${def.method}`);
    let text: string;
    try {
      const msg = await bus.connection.request(subject, JSON.stringify({ v: 1 }), {
        timeout: timeoutMs,
      });
      const errorHeader = msg.headers?.get("Nats-Service-Error");
      if (errorHeader) throw new GatewayError(`mcp-gateway ${def.method}: ${errorHeader}`);
      text = msg.string();
    } catch (err) {
      if (err instanceof GatewayError) throw err;
      throw new GatewayError(`mcp-gateway ${def.method} failed: ${(err as Error).message}`, {
        cause: err,
      });
    }
    const parsed = def.reply.safeParse(JSON.parse(text));
    if (!parsed.success) throw new GatewayError(`mcp-gateway ${def.method}: invalid reply`);
    return parsed.data as Reply<K>;
  }
  return {
    health: () => call("health"),
    warnings: () => call("warnings"),
    serverTools: () => call("serverTools"),
  };
}
