import { parseArgs } from "node:util";
import {
  ConfigError,
  type ConfigWarning,
  configView,
  DEFAULT_CONFIG_DIR,
  formatIssue,
  loadConfig,
} from "@tarsy/config";
import type { InspectedServer } from "@tarsy/mcp-gateway";
import {
  type Command,
  EXIT,
  HELP_OPTION,
  jsonText,
  OUTPUT_OPTIONS,
  outputFormat,
} from "../command.ts";
import { formatConfigSummary } from "./config-summary.ts";

const USAGE = `Usage: tarsy config check [--config-dir DIR] [--strict] [--tools] [--output json]

Loads tarsy.yaml and llm-providers.yaml, validates them with the built-ins and prints a
summary of chains, agents, MCP servers and LLM providers, or every problem found (exit 1).
Warnings are printed in both cases. Settings of the Go TARSy that this implementation does not
act on yet are listed with what they do there and the issue that brings them. Everything goes
to standard output; with --output json, standard output holds only the JSON and the problems
and warnings go to standard error.

Options:
  -c, --config-dir DIR  configuration directory (default: $TARSY_CONFIG_DIR, else ${DEFAULT_CONFIG_DIR})
      --strict          fail (exit 1) when a setting is not supported yet
      --tools           also start each enabled MCP server (as mcp-gateway does), list its tools
                        with their class (read-only or mutating, and what said so), and stop
                        it; exit 1 when a server cannot be reached. JSON: under "mcp_tools"
  -o, --output FORMAT   text (the summary) or json: the configuration as GET /api/v1/system/config
                        answers it for this directory (no secrets)
      --json            same as --output json
  -h, --help            show this help
`;

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** Warnings, then the Go TARSy settings not supported yet (each use with what it would do). */
function formatWarnings(warnings: readonly ConfigWarning[]): string {
  const general = warnings.filter((w) => !w.unsupported);
  const unsupported = warnings.filter((w) => w.unsupported);
  let out = "";
  if (general.length > 0) {
    out += `${plural(general.length, "warning")}:\n`;
    for (const warning of general) out += `  warning: ${formatIssue(warning)}\n`;
  }
  if (unsupported.length > 0) {
    out += `Not supported yet (${plural(unsupported.length, "setting")} of the Go TARSy, ignored):\n`;
    for (const warning of unsupported) {
      const row = warning.unsupported;
      if (!row) continue;
      out += `  unsupported: ${warning.file}: ${warning.path}: ${row.does} (#${row.issue})\n`;
    }
  }
  return out;
}

const CLASS_SOURCE = {
  annotations: "its annotations",
  config: "mcp_servers.<id>.tools",
  default: "not annotated",
} as const;

/** Each server's tools with their class: mutating tools are offered to action agents only. */
function formatToolClasses(servers: readonly InspectedServer[]): string {
  const lines = ["", "MCP tools (mutating ones are offered to action agents only):"];
  for (const entry of servers) {
    if ("error" in entry) {
      lines.push(`  ${entry.server}: could not be listed: ${entry.error}`);
      continue;
    }
    const mutating = entry.tools.filter((t) => t.mutating).length;
    lines.push(
      `  ${entry.server}: ${plural(entry.tools.length, "tool")}, ${entry.tools.length - mutating} read-only, ${mutating} mutating`,
    );
    const width = Math.max(0, ...entry.tools.map((t) => t.tool.length));
    for (const tool of entry.tools) {
      const kind = tool.mutating ? "mutating " : "read-only";
      lines.push(
        `    ${tool.tool.padEnd(width)}  ${kind}  (${CLASS_SOURCE[tool.mutating_source]})`,
      );
    }
  }
  return `${lines.join("\n")}\n`;
}

const OPTIONS = {
  "config-dir": { type: "string", short: "c" },
  strict: { type: "boolean" },
  tools: { type: "boolean" },
  ...OUTPUT_OPTIONS,
  ...HELP_OPTION,
} as const;

export const configCheckCommand: Command = {
  path: ["config", "check"],
  summary: "validate the configuration and print a summary",
  usage: USAGE,
  options: OPTIONS,
  async run({ args, env, io }) {
    const { values } = parseArgs({
      args,
      options: OPTIONS,
      strict: true,
      allowPositionals: false,
    });
    if (values.help) {
      io.out(USAGE);
      return EXIT.ok;
    }
    const format = outputFormat(values);
    // Text: one stream. JSON: stdout stays parseable.
    const report = (text: string) => (format === "json" ? io.err(text) : io.out(text));
    const configDir = values["config-dir"] ?? env.configDir ?? DEFAULT_CONFIG_DIR;
    try {
      const { config, warnings } = loadConfig({ configDir, env: env.vars });
      // Loaded only for --tools: the MCP clients are not part of every command's start.
      const inspected = values.tools
        ? await (await import("@tarsy/mcp-gateway")).inspectServers(
            [...config.mcpServers.values()].filter((s) => s.enabled !== false),
            { inheritedEnv: env.vars, initTimeoutMs: 60_000, listTimeoutMs: 30_000 },
          )
        : undefined;
      if (format === "json") {
        io.out(jsonText({ ...configView(config), ...(inspected && { mcp_tools: inspected }) }));
      } else {
        io.out(formatConfigSummary(config));
        if (inspected) io.out(formatToolClasses(inspected));
      }
      report(formatWarnings(warnings));
      const unreachable = inspected?.filter((s) => "error" in s) ?? [];
      if (unreachable.length > 0) {
        report(
          `Configuration is valid, but ${plural(unreachable.length, "MCP server")} could not be listed: ${unreachable.map((s) => s.server).join(", ")}\n`,
        );
        return EXIT.failed;
      }
      const unsupported = warnings.filter((w) => w.unsupported).length;
      if (values.strict && unsupported > 0) {
        report(
          `Configuration is valid, but --strict: ${plural(unsupported, "setting")} not supported yet.\n`,
        );
        return EXIT.failed;
      }
      if (format === "text") io.out("Configuration is valid.\n");
      return EXIT.ok;
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      report(
        `Configuration in ${configDir} is invalid: ${plural(error.issues.length, "problem")}\n`,
      );
      for (const issue of error.issues) report(`  error: ${formatIssue(issue)}\n`);
      report(formatWarnings(error.warnings));
      return EXIT.failed;
    }
  },
};
