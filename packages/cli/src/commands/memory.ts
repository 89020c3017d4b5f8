import {
  MemoryListQuerySchema,
  type MemoryListResponse,
  MemoryListResponseSchema,
  type MemoryResponse,
  MemoryResponseSchema,
} from "@tarsy/contracts";
import { z } from "zod";
import { callApi } from "../api.ts";
import {
  type Command,
  EXIT,
  HELP_OPTION,
  jsonText,
  OUTPUT_OPTIONS,
  outputFormat,
  parseCommandArgs,
  UsageError,
} from "../command.ts";

const ENV_NOTE = "Environment: TARSY_API_URL (default http://127.0.0.1:8080)\n";

const LIST_USAGE = `Usage: tarsy memory list [--category C] [--valence V] [--deprecated true|false] [--session ID] [--page N] [--page-size N]

Investigation memories of the projects you may read (GET /api/v1/memories), newest first: what
the reflector learned from scored sessions and what reviewers taught it.

Options:
      --category C       semantic, episodic or procedural
      --valence V        positive, negative or neutral
      --deprecated B     true: only deprecated memories; false: only live ones (default: both)
  -s, --session ID       only memories learned from this session
  -p, --page N           page N (default 1)
      --page-size N      memories per page (default 20, at most 100)
  -o, --output FORMAT    text (a table) or json (the API's answer)
      --json             same as --output json
  -h, --help             show this help

${ENV_NOTE}`;

const LIST_OPTIONS = {
  category: { type: "string" },
  valence: { type: "string" },
  deprecated: { type: "string" },
  session: { type: "string", short: "s" },
  page: { type: "string", short: "p" },
  "page-size": { type: "string" },
  ...OUTPUT_OPTIONS,
  ...HELP_OPTION,
} as const;

/** The option that sets each query parameter, for usage errors. */
const FLAG_OF: Record<string, string> = {
  category: "--category",
  valence: "--valence",
  deprecated: "--deprecated",
  source_session_id: "--session",
  page: "--page",
  page_size: "--page-size",
};

/** The API query of `memory list`'s options, checked with the API's own schema. */
export function memoryListQuery(values: {
  category?: string;
  valence?: string;
  deprecated?: string;
  session?: string;
  page?: string;
  "page-size"?: string;
}): URLSearchParams {
  const raw: Record<string, string> = {};
  if (values.category !== undefined) raw.category = values.category;
  if (values.valence !== undefined) raw.valence = values.valence;
  if (values.deprecated !== undefined) raw.deprecated = values.deprecated;
  if (values.session !== undefined) raw.source_session_id = values.session;
  if (values.page !== undefined) raw.page = values.page;
  if (values["page-size"] !== undefined) raw.page_size = values["page-size"];
  const parsed = MemoryListQuerySchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = FLAG_OF[String(issue?.path[0])] ?? String(issue?.path[0]);
    throw new UsageError(`${name}: ${issue?.message ?? "invalid"}`);
  }
  return new URLSearchParams(raw);
}

const CONTENT_WIDTH = 60;
const COLUMNS = ["ID", "CATEGORY", "VALENCE", "CONF", "SEEN", "STATE", "CONTENT"] as const;

const oneLine = (text: string, width: number): string => {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > width ? `${flat.slice(0, width - 1)}…` : flat;
};

const cells = (m: MemoryResponse): string[] => [
  m.id,
  m.category,
  m.valence,
  m.confidence.toFixed(2),
  String(m.seen_count),
  m.deprecated ? "deprecated" : "live",
  oneLine(m.content, CONTENT_WIDTH),
];

/** The page as an aligned table, then "page P of N, T memories". */
export function formatMemoryList(answer: MemoryListResponse): string {
  const total = answer.total;
  const footer = `page ${answer.page} of ${Math.max(answer.total_pages, 1)}, ${total} memor${total === 1 ? "y" : "ies"}\n`;
  if (answer.memories.length === 0) return `No memories.\n${footer}`;
  const rows = [COLUMNS as readonly string[], ...answer.memories.map(cells)];
  const widths = COLUMNS.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  const lines = rows.map((r) =>
    r
      .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd(),
  );
  return `${lines.join("\n")}\n${footer}`;
}

/** One memory: its fields, a line each, then its content in full. */
export function formatMemory(m: MemoryResponse): string {
  const fields: [string, string][] = [
    ["Memory", m.id],
    ["Project", m.project],
    ["Category", m.category],
    ["Valence", m.valence],
    ["Confidence", m.confidence.toFixed(2)],
    ["Seen", `${m.seen_count} time${m.seen_count === 1 ? "" : "s"}, last ${m.last_seen_at}`],
    ["State", m.deprecated ? "deprecated (not given to investigations)" : "live"],
    ["Learned from", m.source_session_id ?? "-"],
    ["Alert type", m.alert_type ?? "-"],
    ["Chain", m.chain_id ?? "-"],
    ["Created", m.created_at],
    ["Updated", m.updated_at],
  ];
  const width = Math.max(...fields.map(([k]) => k.length));
  return `${fields.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join("\n")}\n\n${m.content}\n`;
}

export const memoryListCommand: Command = {
  path: ["memory", "list"],
  summary: "list investigation memories, a page at a time",
  usage: LIST_USAGE,
  options: LIST_OPTIONS,
  async run({ args, env, io }) {
    const parsed = parseCommandArgs({ args, io }, LIST_USAGE, LIST_OPTIONS);
    if (!parsed) return EXIT.ok;
    const { values, positionals } = parsed;
    const format = outputFormat(values);
    if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}`);
    const query = memoryListQuery(values);
    const answer = await callApi(env, {
      method: "GET",
      path: `/api/v1/memories${query.size > 0 ? `?${query}` : ""}`,
      schema: MemoryListResponseSchema,
    });
    io.out(format === "json" ? jsonText(answer) : formatMemoryList(answer));
    return EXIT.ok;
  },
};

const OPTIONS_TEXT = `Options:
  -o, --output FORMAT   text or json
      --json            same as --output json
  -h, --help            show this help

${ENV_NOTE}`;

const ONE_OPTIONS = { ...OUTPUT_OPTIONS, ...HELP_OPTION } as const;

interface MemoryCall {
  verb: string;
  summary: string;
  usage: string;
  /** Extra options beside --output and --help. */
  options?: Record<string, { type: "boolean" }>;
  run(
    env: Parameters<Command["run"]>[0]["env"],
    id: string,
    values: Record<string, unknown>,
  ): Promise<{ json: unknown; text: string }>;
}

/** `tarsy memory <verb> <memory-id>`: one call on one memory (a 404 exits 1, as any API error). */
function memoryCommand(call: MemoryCall): Command {
  const options = { ...call.options, ...ONE_OPTIONS } as const;
  return {
    path: ["memory", call.verb],
    summary: call.summary,
    usage: call.usage,
    options,
    async run({ args, env, io }) {
      const parsed = parseCommandArgs({ args, io }, call.usage, options);
      if (!parsed) return EXIT.ok;
      const { values, positionals } = parsed;
      const format = outputFormat(values);
      if (positionals.length !== 1) throw new UsageError("give exactly one memory id");
      const answer = await call.run(env, positionals[0] as string, values);
      io.out(format === "json" ? jsonText(answer.json) : answer.text);
      return EXIT.ok;
    },
  };
}

const path = (id: string) => `/api/v1/memories/${encodeURIComponent(id)}`;

export const memoryShowCommand = memoryCommand({
  verb: "show",
  summary: "show one investigation memory",
  usage: `Usage: tarsy memory show <memory-id>

One memory (GET /api/v1/memories/:id): category, valence, confidence, how often it was seen,
the session it was learned from, and its content in full.

Exit codes: 0 shown; 1 no such memory (or one you may not read), or the API could not be
reached; 2 bad arguments.

${OPTIONS_TEXT}`,
  async run(env, id) {
    const memory = await callApi(env, {
      method: "GET",
      path: path(id),
      schema: MemoryResponseSchema,
    });
    return { json: memory, text: formatMemory(memory) };
  },
});

export const memoryDeprecateCommand = memoryCommand({
  verb: "deprecate",
  summary: "deprecate an investigation memory (--undo: make it live again)",
  usage: `Usage: tarsy memory deprecate <memory-id> [--undo]

Deprecates a memory (PATCH /api/v1/memories/:id {deprecated: true}): it stays listed but is no
longer given to investigations. --undo makes it live again. Needs the update permission in the
memory's project.

Exit codes: 0 done; 1 no such memory, not allowed, or the API could not be reached; 2 bad
arguments.

      --undo            make a deprecated memory live again
${OPTIONS_TEXT}`,
  options: { undo: { type: "boolean" } },
  async run(env, id, values) {
    const deprecated = values.undo !== true;
    const memory = await callApi(env, {
      method: "PATCH",
      path: path(id),
      body: { deprecated },
      schema: MemoryResponseSchema,
    });
    return { json: memory, text: `memory ${memory.id}: ${deprecated ? "deprecated" : "live"}\n` };
  },
});

export const memoryDeleteCommand = memoryCommand({
  verb: "delete",
  summary: "delete an investigation memory",
  usage: `Usage: tarsy memory delete <memory-id>

Deletes a memory for good (DELETE /api/v1/memories/:id), and the record of the sessions it was
given to. Needs the delete permission in the memory's project. With --output json, prints
{"id": …, "deleted": true} (the API answers 204 without a body).

Exit codes: 0 deleted; 1 no such memory (or deleted already), not allowed, or the API could
not be reached; 2 bad arguments.

${OPTIONS_TEXT}`,
  async run(env, id) {
    await callApi(env, { method: "DELETE", path: path(id), schema: z.null() });
    return { json: { id, deleted: true }, text: `memory ${id}: deleted\n` };
  },
});
