import { parseArgs } from "node:util";
import { BusNotFoundError } from "@tarsy/bus";
import { withBusAdmin } from "../bus.ts";
import {
  type Command,
  type CommandContext,
  EXIT,
  HELP_OPTION,
  OUTPUT_OPTIONS,
  outputFormat,
  UsageError,
} from "../command.ts";

const ENV_NOTE = `Environment: NATS_URL, TARSY_SUBJECT_PREFIX, TARSY_STREAM_SUFFIX and the other NATS_* settings
`;

const LIST_USAGE = `Usage: tarsy dlq list [--output json] [--limit N]

Lists the dead letters (work messages that failed for good), oldest first: sequence,
original subject, deliveries, when it failed and the error.

Options:
  -o, --output FORMAT   text (a table) or json: one JSON line per dead letter, {"seq", "letter"}
      --json            same as --output json
  -n, --limit N         at most N dead letters (default 100)
  -h, --help            show this help

${ENV_NOTE}`;

const REDRIVE_USAGE = `Usage: tarsy dlq redrive <seq>

Publishes the dead letter's original message to its original subject again, then removes
it from the dead letters. Exits 1 when there is no dead letter with that sequence.

Options:
  -h, --help   show this help

${ENV_NOTE}`;

const DISCARD_USAGE = `Usage: tarsy dlq discard <seq>

Removes a dead letter without redriving it. Exits 1 when there is none with that sequence.

Options:
  -h, --help   show this help

${ENV_NOTE}`;

function oneSeq(args: string[]): number | "help" {
  const { values, positionals } = parseArgs({
    args,
    options: HELP_OPTION,
    strict: true,
    allowPositionals: true,
  });
  if (values.help) return "help";
  const [seq, ...rest] = positionals;
  if (seq === undefined || rest.length > 0 || !/^[1-9]\d*$/.test(seq)) {
    throw new UsageError("give one dead-letter sequence number (see tarsy dlq list)");
  }
  return Number(seq);
}

function oneLine(text: string, max = 160): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

const LIST_OPTIONS = {
  ...OUTPUT_OPTIONS,
  limit: { type: "string", short: "n" },
  ...HELP_OPTION,
} as const;

export const dlqListCommand: Command = {
  path: ["dlq", "list"],
  summary: "list dead letters (sequence, subject, deliveries, error)",
  usage: LIST_USAGE,
  options: LIST_OPTIONS,
  async run({ args, env, io }) {
    const { values } = parseArgs({
      args,
      options: LIST_OPTIONS,
      strict: true,
      allowPositionals: false,
    });
    if (values.help) {
      io.out(LIST_USAGE);
      return EXIT.ok;
    }
    const format = outputFormat(values);
    if (values.limit !== undefined && !/^[1-9]\d*$/.test(values.limit)) {
      throw new UsageError("--limit must be a positive integer");
    }
    const limit = values.limit === undefined ? 100 : Number(values.limit);
    return withBusAdmin(env, async (admin) => {
      const page = await admin.listDeadLetters({ limit });
      if (format === "json") {
        for (const item of page.items) io.out(`${JSON.stringify(item)}\n`);
        return EXIT.ok;
      }
      if (page.items.length === 0) {
        io.out("No dead letters.\n");
        return EXIT.ok;
      }
      io.out(
        `${"SEQ".padEnd(8)}${"SUBJECT".padEnd(44)}${"DELIV".padEnd(7)}${"FAILED AT".padEnd(26)}ERROR\n`,
      );
      for (const { seq, letter } of page.items) {
        io.out(
          `${String(seq).padEnd(8)}${letter.original_subject.padEnd(44)}${String(letter.deliveries).padEnd(7)}${letter.failed_at.padEnd(26)}${oneLine(letter.error)}\n`,
        );
      }
      if (page.more) io.out(`(more dead letters exist; raise --limit)\n`);
      return EXIT.ok;
    });
  },
};

async function onLetter(
  { args, io }: CommandContext,
  usage: string,
  act: (seq: number) => Promise<string>,
): Promise<number> {
  const seq = oneSeq(args);
  if (seq === "help") {
    io.out(usage);
    return EXIT.ok;
  }
  try {
    io.out(`${await act(seq)}\n`);
    return EXIT.ok;
  } catch (error) {
    if (!(error instanceof BusNotFoundError)) throw error;
    io.err(`tarsy: no dead letter with sequence ${seq}\n`);
    return EXIT.failed;
  }
}

export const dlqRedriveCommand: Command = {
  path: ["dlq", "redrive"],
  summary: "publish a dead letter to its original subject again and remove it",
  usage: REDRIVE_USAGE,
  options: HELP_OPTION,
  run(context) {
    return onLetter(context, REDRIVE_USAGE, (seq) =>
      withBusAdmin(context.env, async (admin) => {
        const result = await admin.redriveDeadLetter(seq);
        return `Redrove dead letter ${seq} to ${result.subject} (stream sequence ${result.seq}${result.duplicate ? ", duplicate" : ""}).`;
      }),
    );
  },
};

export const dlqDiscardCommand: Command = {
  path: ["dlq", "discard"],
  summary: "remove a dead letter without redriving it",
  usage: DISCARD_USAGE,
  options: HELP_OPTION,
  run(context) {
    return onLetter(context, DISCARD_USAGE, (seq) =>
      withBusAdmin(context.env, async (admin) => {
        await admin.discardDeadLetter(seq);
        return `Discarded dead letter ${seq}.`;
      }),
    );
  },
};
