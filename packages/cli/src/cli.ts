import { type CliIo, type Command, type CommandContext, EXIT, UsageError } from "./command.ts";
import { COMMANDS } from "./commands/index.ts";
import type { CliEnv } from "./env.ts";
import { CliError } from "./errors.ts";

const GLOBAL_HELP = `
Options of every command:
  -h, --help            the command's options
  -o, --output json     on read commands: the API's data, machine-readable (--json too)

Environment:
  TARSY_API_URL         ingest-api (default http://127.0.0.1:8080)
  TARSY_WS_URL          stream-relay's WebSocket (default ws://127.0.0.1:8081/api/v1/ws)
  TARSY_TOKEN           an API token (tarsy token create), sent as Authorization: Bearer
  TARSY_COOKIE_FILE     a file holding oauth2-proxy's cookie (_oauth2_proxy=VALUE, or a
                        Netscape cookie jar), sent as Cookie on requests and the WebSocket
  TARSY_USER            X-Forwarded-User, for a TARSy that trusts this machine's address
  TARSY_CONFIG_DIR      the configuration for config check
  NATS_URL, TARSY_SUBJECT_PREFIX, TARSY_STREAM_SUFFIX  NATS, for events and dlq

Exit codes: 0 done; 1 failed (API error, unreachable, refused); 2 bad arguments;
session watch: 3 session failed, 4 cancelled, 5 timed out.
`;

export function helpText(commands: readonly Command[] = COMMANDS): string {
  const width = Math.max(...commands.map((c) => c.path.join(" ").length));
  const lines = commands.map((c) => `  tarsy ${c.path.join(" ").padEnd(width)}  ${c.summary}`);
  return `Usage: tarsy <command> [options]\n\nCommands:\n${lines.join("\n")}\n\nRun "tarsy <command> --help" for a command's options.\n${GLOBAL_HELP}`;
}

/** The command whose path is the longest prefix of argv. */
export function findCommand(
  argv: readonly string[],
  commands: readonly Command[] = COMMANDS,
): Command | undefined {
  let best: Command | undefined;
  for (const command of commands) {
    const matches = command.path.every((word, index) => argv[index] === word);
    if (matches && (!best || command.path.length > best.path.length)) best = command;
  }
  return best;
}

/** Runs one invocation and returns the process exit code. */
export async function runCli(argv: readonly string[], env: CliEnv, io: CliIo): Promise<number> {
  if (argv.length === 0 || argv[0] === "--help" || argv[0] === "-h" || argv[0] === "help") {
    io.out(helpText());
    return argv.length === 0 ? EXIT.usage : EXIT.ok;
  }
  const command = findCommand(argv);
  if (!command) {
    io.err(`tarsy: unknown command "${argv.join(" ")}"\n\n${helpText()}`);
    return EXIT.usage;
  }
  const context: CommandContext = { args: argv.slice(command.path.length), env, io };
  try {
    return await command.run(context);
  } catch (error) {
    if (error instanceof UsageError || isParseArgsError(error)) {
      io.err(`tarsy ${command.path.join(" ")}: ${(error as Error).message}\n\n${command.usage}`);
      return EXIT.usage;
    }
    if (error instanceof CliError) {
      io.err(`tarsy ${command.path.join(" ")}: ${error.message}\n`);
      return EXIT.failed;
    }
    throw error;
  }
}

function isParseArgsError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("ERR_PARSE_ARGS");
}
