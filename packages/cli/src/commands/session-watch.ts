import { type Channel, ChannelSchema, type SessionStatus } from "@tarsy/contracts";
import { type Command, EXIT, HELP_OPTION, positionalArgs, UsageError } from "../command.ts";
import { followChannel } from "../follow.ts";
import { TimelinePrinter } from "../timeline-printer.ts";

const USAGE = `Usage: tarsy session watch <session-id>

Prints a session's live timeline over the WebSocket: the events so far, then new ones as
they happen, with streaming LLM text as it is generated. Reconnects (catching up from the
last event) when the connection drops. Ends when the session does; the exit code says how:

  0  completed
  3  failed
  4  cancelled
  5  timed out
  1  the CLI could not follow it (API or WebSocket unreachable or refusing, bad answer)
  2  bad arguments

Options:
  -h, --help   show this help

Environment: TARSY_WS_URL (default ws://127.0.0.1:8081/api/v1/ws)
`;

/** The WebSocket channel of one session; a bad id is a usage error. */
export function sessionChannel(id: string): Channel {
  const parsed = ChannelSchema.safeParse(`session:${id}`);
  if (!parsed.success) throw new UsageError(`"${id}" is not a session id`);
  return parsed.data;
}

/** The exit code of a session that reached `status`; undefined while it still runs. */
export function sessionExitCode(status: SessionStatus): number | undefined {
  switch (status) {
    case "completed":
      return EXIT.ok;
    case "failed":
      return EXIT.sessionFailed;
    case "cancelled":
      return EXIT.sessionCancelled;
    case "timed_out":
      return EXIT.sessionTimedOut;
    case "pending":
    case "in_progress":
    case "cancelling":
      return undefined;
    default: {
      const never: never = status;
      return never;
    }
  }
}

export const sessionWatchCommand: Command = {
  path: ["session", "watch"],
  summary: "follow a session's live timeline (streaming) until it ends",
  usage: USAGE,
  options: HELP_OPTION,
  async run({ args, env, io }) {
    const positionals = positionalArgs({ args, io }, USAGE, 1, "give exactly one session id");
    if (!positionals) return EXIT.ok;
    const channel = sessionChannel(positionals[0] as string);
    const printer = new TimelinePrinter((text) => io.out(text));
    const code = await followChannel({
      wsUrl: env.wsUrl,
      channel,
      io,
      ...(env.user && { user: env.user }),
      ...(env.token && { token: env.token }),
      ...(env.cookie && { cookie: env.cookie }),
      onEvent(frame) {
        printer.event(frame.payload);
        const event = frame.payload;
        if (event.type !== "session.status") return undefined;
        const exit = sessionExitCode(event.status);
        return exit === undefined ? undefined : { exit };
      },
      onChunk(frame) {
        printer.chunk(frame);
        return undefined;
      },
    });
    printer.finish();
    return code;
  },
};
