import { parseArgs } from "node:util";
import {
  ConfigError,
  type ConfigWarning,
  configView,
  DEFAULT_CONFIG_DIR,
  formatIssue,
  loadConfig,
} from "@tarsy/config";
import {
  type Command,
  EXIT,
  HELP_OPTION,
  jsonText,
  OUTPUT_OPTIONS,
  outputFormat,
} from "../command.ts";
import { formatConfigSummary } from "./config-summary.ts";

const USAGE = `Usage: tarsy config check [--config-dir DIR] [--output json]

Loads tarsy.yaml and llm-providers.yaml, validates them with the built-ins and prints a
summary of chains, agents, MCP servers and LLM providers, or every problem found (on
stderr, exit 1).

Options:
  -c, --config-dir DIR  configuration directory (default: $TARSY_CONFIG_DIR, else ${DEFAULT_CONFIG_DIR})
  -o, --output FORMAT   text (the summary) or json: the configuration as GET /api/v1/system/config
                        answers it for this directory (no secrets)
      --json            same as --output json
  -h, --help            show this help
`;

function formatWarning(warning: ConfigWarning): string {
  return formatIssue(warning);
}

const OPTIONS = {
  "config-dir": { type: "string", short: "c" },
  ...OUTPUT_OPTIONS,
  ...HELP_OPTION,
} as const;

export const configCheckCommand: Command = {
  path: ["config", "check"],
  summary: "validate the configuration and print a summary",
  usage: USAGE,
  options: OPTIONS,
  run({ args, env, io }) {
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
    const configDir = values["config-dir"] ?? env.configDir ?? DEFAULT_CONFIG_DIR;
    try {
      const { config, warnings } = loadConfig({ configDir, env: env.vars });
      io.out(format === "json" ? jsonText(configView(config)) : formatConfigSummary(config));
      if (warnings.length > 0) {
        io.err(`${warnings.length} warning${warnings.length === 1 ? "" : "s"}:\n`);
        for (const warning of warnings) io.err(`  warning: ${formatWarning(warning)}\n`);
      }
      if (format === "text") io.out("Configuration is valid.\n");
      return EXIT.ok;
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      io.err(
        `Configuration in ${configDir} is invalid: ${error.issues.length} problem${error.issues.length === 1 ? "" : "s"}\n`,
      );
      for (const issue of error.issues) io.err(`  error: ${formatIssue(issue)}\n`);
      return EXIT.failed;
    }
  },
};
