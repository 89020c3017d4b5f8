export { findCommand, helpText, runCli } from "./cli.ts";
export {
  type CliIo,
  type Command,
  type CommandContext,
  EXIT,
  UsageError,
} from "./command.ts";
export { formatConfigSummary } from "./commands/config-summary.ts";
export { COMMANDS } from "./commands/index.ts";
export { type CliEnv, loadCliEnv } from "./env.ts";
