import { type Channel, ChannelSchema, TERMINAL_SESSION_STATUSES } from "@tarsy/contracts";
import { type Command, EXIT, positionalArgs, UsageError } from "../command.ts";
import { followChannel } from "../follow.ts";
import { TimelinePrinter } from "../timeline-printer.ts";

const USAGE = `Usage: tarsy session watch <session-id>

Prints a session's live timeline over the WebSocket: the events so far, then new ones as
they happen, with streaming LLM text as it is generated. Reconnects (catching up from the
last event) when the connection drops. Exits 0 once the session reaches a terminal status
(completed, failed, cancelled, timed_out).

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

export const sessionWatchCommand: Command = {
  path: ["session", "watch"],
  summary: "follow a session's live timeline (streaming) until it ends",
  usage: USAGE,
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
      onEvent(frame) {
        printer.event(frame.payload);
        const event = frame.payload;
        if (event.type === "session.status" && TERMINAL_SESSION_STATUSES.includes(event.status)) {
          return { exit: EXIT.ok };
        }
        return undefined;
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
