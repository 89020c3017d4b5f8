import type { McpServerConfig } from "@tarsy/config";
import type { McpToolDefinition } from "@tarsy/contracts";
import { openConnection } from "./client/connection.ts";
import { describe } from "./errors.ts";
import { toToolDefinition } from "./tool-executor.ts";

/** One server as `inspectServers` found it: its tools with their classes, or why not. */
export type InspectedServer =
  | { server: string; tools: McpToolDefinition[] }
  | { server: string; error: string };

export interface InspectOptions {
  /** The environment a stdio server inherits; its config's `env` overrides it. */
  inheritedEnv: Readonly<Record<string, string | undefined>>;
  initTimeoutMs: number;
  listTimeoutMs: number;
}

/**
 * Starts each server as the gateway does, lists its tools with their classes (the server's
 * annotations under `mcp_servers.<id>.tools`), and stops it: what `tarsy config check --tools`
 * shows. A server that cannot be reached is reported with why; the others are still listed.
 */
export function inspectServers(
  servers: readonly McpServerConfig[],
  options: InspectOptions,
): Promise<InspectedServer[]> {
  return Promise.all(
    servers.map(async (config): Promise<InspectedServer> => {
      try {
        const connection = await openConnection(
          config,
          { inheritedEnv: options.inheritedEnv },
          options.initTimeoutMs,
        );
        try {
          const tools = await connection.listTools(options.listTimeoutMs);
          return {
            server: config.id,
            tools: tools.map((t) => toToolDefinition(config.id, t, config)),
          };
        } finally {
          await connection.close();
        }
      } catch (err) {
        return { server: config.id, error: describe(err) };
      }
    }),
  );
}
