import { parseArgs } from "node:util";
import type { CliEnv } from "./env.ts";

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

/** Process exit codes shared by every command. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

export interface Command {
  /** The words that select the command, e.g. `["config", "check"]`. */
  path: readonly string[];
  summary: string;
  usage: string;
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
    options: { help: { type: "boolean", short: "h" } },
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
