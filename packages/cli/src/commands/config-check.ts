import { parseArgs } from "node:util";
import {
  ConfigError,
  type ConfigWarning,
  DEFAULT_CONFIG_DIR,
  formatIssue,
  loadConfig,
} from "@tarsy/config";
import { type Command, EXIT } from "../command.ts";
import { formatConfigSummary } from "./config-summary.ts";

const USAGE = `Usage: tarsy config check [--config-dir DIR] [--strict]

Loads tarsy.yaml and llm-providers.yaml, validates them with the built-ins and prints a
summary of chains, agents, MCP servers and LLM providers, or every problem found. Warnings
are printed in both cases. Settings of the Go TARSy that this implementation does not act on
yet are listed with what they do there and the issue that brings them. Everything goes to
standard output.

Options:
  -c, --config-dir DIR  configuration directory (default: $TARSY_CONFIG_DIR, else ${DEFAULT_CONFIG_DIR})
      --strict          fail (exit 1) when a setting is not supported yet
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

export const configCheckCommand: Command = {
  path: ["config", "check"],
  summary: "validate the configuration and print a summary",
  usage: USAGE,
  run({ args, env, io }) {
    const { values } = parseArgs({
      args,
      options: {
        "config-dir": { type: "string", short: "c" },
        strict: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: false,
    });
    if (values.help) {
      io.out(USAGE);
      return EXIT.ok;
    }
    const configDir = values["config-dir"] ?? env.configDir ?? DEFAULT_CONFIG_DIR;
    try {
      const { config, warnings } = loadConfig({ configDir, env: env.vars });
      io.out(formatConfigSummary(config));
      io.out(formatWarnings(warnings));
      const unsupported = warnings.filter((w) => w.unsupported).length;
      if (values.strict && unsupported > 0) {
        io.out(
          `Configuration is valid, but --strict: ${plural(unsupported, "setting")} not supported yet.\n`,
        );
        return EXIT.failed;
      }
      io.out("Configuration is valid.\n");
      return EXIT.ok;
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      io.out(
        `Configuration in ${configDir} is invalid: ${plural(error.issues.length, "problem")}\n`,
      );
      for (const issue of error.issues) io.out(`  error: ${formatIssue(issue)}\n`);
      io.out(formatWarnings(error.warnings));
      return EXIT.failed;
    }
  },
};
