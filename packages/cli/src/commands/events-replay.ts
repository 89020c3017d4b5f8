import { parseArgs } from "node:util";
import type { EventReadOptions, EventRecord } from "@tarsy/bus";
import { SESSIONS_EVENTS_SUBJECT, sessionEventsSubject } from "@tarsy/contracts";
import { withBus } from "../bus.ts";
import { type Command, EXIT, HELP_OPTION, UsageError } from "../command.ts";

const USAGE = `Usage: tarsy events replay (--session ID | --all-projects) [--from-seq N | --since TIME] [--limit N] [--follow]

Reads the TARSY_EVENTS JetStream stream directly over NATS and prints one JSON line per
event: {"seq", "subject", "timestamp", "event"}, in stream-sequence order. An operator
tool: it needs the NATS credentials and is outside the API's authorization (every project's
events are readable), so run it as an administrator only.

Options:
  -s, --session ID     one session's events (events.session.<ID>)
      --all-projects   the lifecycle events of all sessions, of every project (events.sessions)
      --from-seq N     start at stream sequence N (inclusive; default: the first)
      --since TIME     start at events stored at or after TIME (ISO 8601)
  -n, --limit N        print at most N events (default 1000 without --follow)
  -f, --follow         keep printing new events as they are stored (Ctrl-C to stop)
  -h, --help           show this help

Environment: NATS_URL, TARSY_SUBJECT_PREFIX, TARSY_STREAM_SUFFIX, NATS_TOKEN/USER/PASSWORD,
NATS_CREDS_FILE, NATS_TLS_* (as the services)
`;

function positiveInt(value: string | undefined, name: string, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min) {
    throw new UsageError(`${name} must be an integer ≥ ${min}`);
  }
  return Number(value);
}

function line(record: EventRecord): string {
  return `${JSON.stringify({ seq: record.seq, subject: record.subject, timestamp: record.timestamp, event: record.payload })}\n`;
}

const OPTIONS = {
  session: { type: "string", short: "s" },
  "all-projects": { type: "boolean" },
  "from-seq": { type: "string" },
  since: { type: "string" },
  limit: { type: "string", short: "n" },
  follow: { type: "boolean", short: "f" },
  ...HELP_OPTION,
} as const;

export const eventsReplayCommand: Command = {
  path: ["events", "replay"],
  summary: "print stored events from NATS as JSON lines (by session, sequence or time)",
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
    if (values.session === undefined && !values["all-projects"]) {
      throw new UsageError(
        "give --session ID, or --all-projects to read the sessions of every project (NATS is outside the API's authorization)",
      );
    }
    if (values.session !== undefined && values["all-projects"]) {
      throw new UsageError("give --session or --all-projects, not both");
    }
    const fromSeq = positiveInt(values["from-seq"], "--from-seq", 1);
    const limit = positiveInt(values.limit, "--limit", 1);
    if (fromSeq !== undefined && values.since !== undefined) {
      throw new UsageError("give --from-seq or --since, not both");
    }
    let start: EventReadOptions;
    const subject =
      values.session !== undefined ? sessionEventsSubject(values.session) : SESSIONS_EVENTS_SUBJECT;
    if (values.session !== undefined && !/^[A-Za-z0-9_-]{1,128}$/.test(values.session)) {
      throw new UsageError(`"${values.session}" is not a session id`);
    }
    if (values.since !== undefined) {
      const time = new Date(values.since);
      if (Number.isNaN(time.getTime())) throw new UsageError("--since must be an ISO 8601 time");
      start = { subject, startTime: time };
    } else {
      start = { subject, afterSeq: (fromSeq ?? 1) - 1 };
    }
    return withBus(env, async (bus) => {
      if (values.follow) return follow(bus, start, limit, io.out);
      const max = limit ?? 1_000;
      let printed = 0;
      let options = start;
      for (;;) {
        const page = await bus.replayEvents({ ...options, limit: Math.min(256, max - printed) });
        for (const record of page.events) io.out(line(record));
        printed += page.events.length;
        if (!page.more || printed >= max) break;
        options = { subject, afterSeq: page.lastSeq };
      }
      return EXIT.ok;
    });
  },
};

async function follow(
  bus: Parameters<Parameters<typeof withBus>[1]>[0],
  start: EventReadOptions,
  limit: number | undefined,
  out: (text: string) => void,
): Promise<number> {
  const feed = await bus.followEvents(start);
  const stop = () => void feed.close();
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  try {
    let printed = 0;
    for await (const record of feed) {
      out(line(record));
      printed++;
      if (limit !== undefined && printed >= limit) break;
    }
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
    await feed.close();
  }
  return EXIT.ok;
}
