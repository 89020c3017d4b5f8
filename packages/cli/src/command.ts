import { type ParseArgsConfig, parseArgs } from "node:util";
import type { CliEnv } from "./env.ts";

/** A command's options, as `parseArgs` takes them. */
export type CommandOptions = NonNullable<ParseArgsConfig["options"]>;

/** Where a command writes; tests and main pass real streams. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
}

export interface CommandContext {
  /** Arguments after the command's own words (`tarsy config check --x` → `["--x"]`). */
  args: string[];
  env: CliEnv;
  io: CliIo;
}

/**
 * Process exit codes shared by every command. `session watch` says how the session ended:
 * 0 completed, 3 failed, 4 cancelled, 5 timed out; 1 is always the CLI's own failure.
 */
export const EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  sessionFailed: 3,
  sessionCancelled: 4,
  sessionTimedOut: 5,
} as const;

export interface Command {
  /** The words that select the command, e.g. `["config", "check"]`. */
  path: readonly string[];
  summary: string;
  usage: string;
  /** Every option the command parses; each must appear in `usage` (a test checks it). */
  options: CommandOptions;
  run(context: CommandContext): Promise<number> | number;
}

/** Thrown by commands for bad arguments; printed with the usage, exit code 2. */
export class UsageError extends Error {
  readonly code = "cli_usage" as const;
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

export const HELP_OPTION = { help: { type: "boolean", short: "h" } } as const;

/** `--output text|json` (`-o`) and its older alias `--json`. */
export const OUTPUT_OPTIONS = {
  output: { type: "string", short: "o" },
  json: { type: "boolean" },
} as const;

export type OutputFormat = "text" | "json";

/** The output format chosen by `--output` / `--json`; anything else is a usage error. */
export function outputFormat(values: { output?: string; json?: boolean }): OutputFormat {
  if (values.json) {
    if (values.output !== undefined && values.output !== "json") {
      throw new UsageError(`--json contradicts --output ${values.output}`);
    }
    return "json";
  }
  if (values.output === undefined || values.output === "text") return "text";
  if (values.output === "json") return "json";
  throw new UsageError(`--output must be text or json, not "${values.output}"`);
}

/** An API answer as machine-readable output: exactly the data, pretty-printed. */
export function jsonText(data: unknown): string {
  return `${JSON.stringify(data, null, 2)}\n`;
}

/**
 * The arguments of a command that takes only positionals and `-h/--help`: exactly `count`
 * of them (else a UsageError saying `problem`), or `null` once `--help` printed `usage`.
 */
export function positionalArgs(
  { args, io }: Pick<CommandContext, "args" | "io">,
  usage: string,
  count: number,
  problem: string,
): string[] | null {
  const { values, positionals } = parseArgs({
    args,
    options: HELP_OPTION,
    strict: true,
    allowPositionals: true,
  });
  if (values.help) {
    io.out(usage);
    return null;
  }
  if (positionals.length !== count) throw new UsageError(problem);
  return positionals;
}

type ParsedCommandArgs<O extends CommandOptions> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O; strict: true; allowPositionals: true }>
>;

/**
 * A command's arguments, parsed strictly against its options (positionals allowed; the
 * command checks how many), or `null` once `-h/--help` printed `usage`.
 */
export function parseCommandArgs<const O extends CommandOptions & typeof HELP_OPTION>(
  { args, io }: Pick<CommandContext, "args" | "io">,
  usage: string,
  options: O,
): ParsedCommandArgs<O> | null {
  const parsed = parseArgs({ args, options, strict: true, allowPositionals: true });
  if ((parsed.values as { help?: boolean }).help) {
    io.out(usage);
    return null;
  }
  return parsed;
}
