import type { McpSelection } from "@tarsy/contracts";
import { UnknownReferenceError } from "./errors.ts";
import type { NativeToolsConfig, TarsyConfig } from "./types.ts";

export interface ResolvedMcpSelection {
  server_ids: string[];
  /** Server id → allowed tool names; servers not listed here expose all their tools. */
  tool_filter: Record<string, string[]>;
  native_tools_override?: NativeToolsConfig;
}

/** The MCP server ids of a selection that the configuration does not define. */
export function unknownSelectionServers(config: TarsyConfig, selection: McpSelection): string[] {
  return selection.servers.map((s) => s.name).filter((name) => !config.mcpServers.has(name));
}

/**
 * The servers an execution gets: the per-alert selection when there is one (it replaces the
 * configured list, never merges with it), else the resolved agent's servers. Unknown servers
 * in the selection are an error (checked again here because config may change between
 * submission and execution).
 */
export function resolveMcpSelection(
  config: TarsyConfig,
  resolved: { mcp_servers: readonly string[] },
  selection?: McpSelection | null,
): ResolvedMcpSelection {
  // A server with `enabled: false` is never offered (the loader warned about references to it).
  const enabled = (id: string) => config.mcpServers.get(id)?.enabled !== false;
  if (!selection) return { server_ids: resolved.mcp_servers.filter(enabled), tool_filter: {} };
  const unknown = unknownSelectionServers(config, selection);
  if (unknown.length > 0) throw new UnknownReferenceError("mcp_server", unknown, "mcp_selection");
  const serverIds: string[] = [];
  const toolFilter: Record<string, string[]> = {};
  for (const server of selection.servers) {
    if (!enabled(server.name)) continue;
    if (!serverIds.includes(server.name)) serverIds.push(server.name);
    if (server.tools && server.tools.length > 0) {
      const tools = new Set([...(toolFilter[server.name] ?? []), ...server.tools]);
      toolFilter[server.name] = [...tools];
    }
  }
  return {
    server_ids: serverIds,
    tool_filter: toolFilter,
    ...(selection.native_tools && { native_tools_override: { ...selection.native_tools } }),
  };
}
