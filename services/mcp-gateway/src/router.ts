/** `server.tool`: each part a word character followed by word characters or hyphens. */
const TOOL_NAME = /^(\w[\w-]*)\.(\w[\w-]*)$/;

/** `server__tool` (function calling, where dots are not allowed) → `server.tool`. */
export function normalizeToolName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.includes("__") && !trimmed.includes(".")) return trimmed.replace("__", ".");
  return trimmed;
}

export interface ToolRef {
  server: string;
  tool: string;
}

export type RouteResult = { ok: true; ref: ToolRef } | { ok: false; message: string };

/** Splits a canonical `server.tool`; the message tells the LLM the expected shape. */
export function splitToolName(name: string): RouteResult {
  const match = TOOL_NAME.exec(name);
  if (!match) {
    return {
      ok: false,
      message: `invalid tool name "${name}": must be in 'server.tool' format (e.g. 'kubernetes-server.get_pods')`,
    };
  }
  return { ok: true, ref: { server: match[1] as string, tool: match[2] as string } };
}

export interface RoutingScope {
  /** Servers this execution may use. */
  servers: readonly string[];
  /** server → allowed tools; absent or empty allows every tool of that server. */
  toolFilters: Readonly<Record<string, readonly string[]>>;
}

/** Normalizes, splits and checks a tool name against an execution's servers and tool filters. */
export function routeToolCall(name: string, scope: RoutingScope): RouteResult {
  const split = splitToolName(normalizeToolName(name));
  if (!split.ok) return split;
  const { server, tool } = split.ref;
  if (!scope.servers.includes(server)) {
    const available = scope.servers.length > 0 ? scope.servers.join(", ") : "(none)";
    return {
      ok: false,
      message: `MCP server "${server}" is not available for this execution. Available servers: ${available}`,
    };
  }
  const filter = scope.toolFilters[server];
  if (filter && filter.length > 0 && !filter.includes(tool)) {
    return {
      ok: false,
      message: `tool "${tool}" is not available on server "${server}". Available tools: ${filter.join(", ")}`,
    };
  }
  return split;
}

/** Whether a tool passes the execution's filter for its server. */
export function toolAllowed(scope: RoutingScope, server: string, tool: string): boolean {
  const filter = scope.toolFilters[server];
  return !filter || filter.length === 0 || filter.includes(tool);
}
