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
export { type CliEnv, DEFAULT_API_URL, DEFAULT_WS_URL, loadCliEnv } from "./env.ts";
export {
  ApiRequestError,
  BadResponseError,
  CliError,
  InputError,
  UnreachableError,
} from "./errors.ts";
export { type FollowOptions, followChannel } from "./follow.ts";
export { TimelinePrinter } from "./timeline-printer.ts";
