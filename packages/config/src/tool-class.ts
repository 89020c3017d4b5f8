import type { ToolClassSource } from "@tarsy/contracts";
import picomatch from "picomatch";
import type { DryRunForm, McpServerConfig, ToolClassOverride } from "./types.ts";

/** The MCP tool annotations that decide a tool's class (the spec's `ToolAnnotations`). */
export interface ToolHints {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
}

/** Whether a tool may change what it reaches, and what said so. */
export interface ToolClass {
  mutating: boolean;
  source: ToolClassSource;
}

/** Why a `mcp_servers.<id>.tools` key is not a usable tool name or glob, if it is not. */
export function toolPatternProblem(pattern: string): string | undefined {
  if (pattern.trim() !== pattern) return `"${pattern}" has leading or trailing spaces`;
  try {
    picomatch.makeRe(pattern, { strictBrackets: true });
    return undefined;
  } catch (err) {
    return `"${pattern}" is not a valid tool name or glob: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/**
 * The class of one tool of a server. An entry of `mcp_servers.<id>.tools` wins: the tool's own
 * name first, else the first glob (in the order written) that matches it. Else the server's
 * annotations: `readOnlyHint: true` is read-only, `readOnlyHint: false` mutating. A tool with
 * neither counts as mutating, as the MCP specification's defaults say (`readOnlyHint` false,
 * `destructiveHint` true): nothing unannotated reaches an agent that may not change things.
 */
export function classifyTool(
  server: Pick<McpServerConfig, "tools">,
  tool: string,
  hints: ToolHints | undefined,
): ToolClass {
  const override = overrideOf(server, tool);
  if (override) return { mutating: override.mutating, source: "config" };
  if (typeof hints?.readOnlyHint === "boolean") {
    return { mutating: !hints.readOnlyHint, source: "annotations" };
  }
  return { mutating: true, source: "default" };
}

/** The `tools` entry of a tool: its own name first, else the first glob that matches it. */
function overrideOf(
  server: Pick<McpServerConfig, "tools">,
  tool: string,
): ToolClassOverride | undefined {
  const overrides = server.tools ?? {};
  const exact = Object.hasOwn(overrides, tool) ? overrides[tool] : undefined;
  return (
    exact ??
    Object.entries(overrides).find(
      ([pattern]) => picomatch.scan(pattern).isGlob && picomatch.isMatch(tool, pattern),
    )?.[1]
  );
}

/**
 * The dry-run form of a mutating tool's call, if its `tools` entry has one: the tool it runs
 * (the call's own unless named) and the arguments laid over the call's.
 */
export function dryRunOf(
  server: Pick<McpServerConfig, "tools">,
  tool: string,
): Required<DryRunForm> | undefined {
  const form = overrideOf(server, tool)?.dry_run;
  if (!form) return undefined;
  return { tool: form.tool ?? tool, arguments: form.arguments };
}
