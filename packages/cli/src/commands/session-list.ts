import {
  describeCancel,
  SessionListQuerySchema,
  type SessionListResponse,
  SessionListResponseSchema,
  type SessionSummary,
} from "@tarsy/contracts";
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
import { duration } from "./session-format.ts";

const USAGE = `Usage: tarsy session list [--status S[,S...]]... [--type TYPE] [--search TEXT] [--page N] [--page-size N]

Lists sessions, newest first (GET /api/v1/sessions): id, status, alert type, chain, when it
was created and how long it ran, then the page and the total that match. A cancelled session
notes who cancelled it and why (NOTE, shown when the page has one); a labelled one its labels
(LABELS, shown when the page has one).

Options:
  -s, --status S[,S...]  only these statuses (pending, in_progress, cancelling, completed,
                         failed, cancelled, timed_out); repeat or separate with commas
  -t, --type TYPE        only this alert type
      --chain ID         only this chain
      --project P        only this project
  -l, --label NAME       only sessions labelled NAME (a label of a configured label map)
  -q, --search TEXT      text in the alert data, final analysis or executive summary (≥ 3 chars)
  -p, --page N           page N (default 1)
      --page-size N      sessions per page (default 25, at most 1000)
  -o, --output FORMAT    text (a table) or json (the API's answer)
      --json             same as --output json
  -h, --help             show this help

Environment: TARSY_API_URL (default http://127.0.0.1:8080)
`;

const OPTIONS = {
  status: { type: "string", short: "s", multiple: true },
  type: { type: "string", short: "t" },
  chain: { type: "string" },
  project: { type: "string" },
  label: { type: "string", short: "l" },
  search: { type: "string", short: "q" },
  page: { type: "string", short: "p" },
  "page-size": { type: "string" },
  ...OUTPUT_OPTIONS,
  ...HELP_OPTION,
} as const;

/** The query string, checked against the API's own schema so a mistake is said before asking. */
export function listQuery(values: {
  status?: string[];
  type?: string;
  chain?: string;
  project?: string;
  label?: string;
  search?: string;
  page?: string;
  "page-size"?: string;
}): URLSearchParams {
  const raw: Record<string, string> = {};
  if (values.status && values.status.length > 0) raw.status = values.status.join(",");
  if (values.type !== undefined) raw.alert_type = values.type;
  if (values.chain !== undefined) raw.chain_id = values.chain;
  if (values.project !== undefined) raw.project = values.project;
  if (values.label !== undefined) raw.label = values.label;
  if (values.search !== undefined) raw.search = values.search;
  if (values.page !== undefined) raw.page = values.page;
  if (values["page-size"] !== undefined) raw.page_size = values["page-size"];
  const parsed = SessionListQuerySchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = OPTION_OF[String(issue?.path[0])] ?? String(issue?.path[0]);
    throw new UsageError(`${name}: ${issue?.message ?? "invalid"}`);
  }
  return new URLSearchParams(raw);
}

const OPTION_OF: Record<string, string> = {
  status: "--status",
  alert_type: "--type",
  chain_id: "--chain",
  project: "--project",
  label: "--label",
  search: "--search",
  page: "--page",
  page_size: "--page-size",
};

const COLUMNS = ["ID", "STATUS", "TYPE", "CHAIN", "CREATED", "DURATION"] as const;

/** The longest NOTE shown in the table (the whole reason is in `session show`). */
const MAX_NOTE_CHARS = 80;

/** Who cancelled a cancelled session and why, cut to fit a table row; else "". */
function noteOf(s: SessionSummary): string {
  const note = s.status === "cancelled" ? (describeCancel(s) ?? "") : "";
  const chars = Array.from(note.replace(/\s+/g, " "));
  return chars.length <= MAX_NOTE_CHARS
    ? chars.join("")
    : `${chars.slice(0, MAX_NOTE_CHARS - 1).join("")}…`;
}

/** The session's labels, comma-separated ("" when it has none or is unlabelled). */
const labelsOf = (s: SessionSummary): string => (s.labels ?? []).join(",");

function cells(s: SessionSummary, withNote: boolean, withLabels: boolean): string[] {
  return [
    s.id,
    s.status,
    s.alert_type,
    s.chain_id,
    s.created_at,
    s.duration_ms === null ? "-" : duration(s.duration_ms),
    ...(withLabels ? [labelsOf(s)] : []),
    ...(withNote ? [noteOf(s)] : []),
  ];
}

/**
 * The sessions as an aligned table, then "page P of N, T sessions". A NOTE column (who
 * cancelled and why) appears when a cancelled session on the page has one.
 */
export function formatSessionList(answer: SessionListResponse): string {
  const { sessions, pagination: p } = answer;
  const footer = `page ${p.page} of ${Math.max(p.total_pages, 1)}, ${p.total} session${p.total === 1 ? "" : "s"}\n`;
  if (sessions.length === 0) return `No sessions match.\n${footer}`;
  const withNote = sessions.some((s) => noteOf(s) !== "");
  const withLabels = sessions.some((s) => labelsOf(s) !== "");
  const header: readonly string[] = [
    ...COLUMNS,
    ...(withLabels ? ["LABELS"] : []),
    ...(withNote ? ["NOTE"] : []),
  ];
  const rows = [header, ...sessions.map((s) => cells(s, withNote, withLabels))];
  const widths = header.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  const lines = rows.map((r) =>
    r
      .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd(),
  );
  return `${lines.join("\n")}\n${footer}`;
}

export const sessionListCommand: Command = {
  path: ["session", "list"],
  summary: "list sessions by status, alert type or text, a page at a time",
  usage: USAGE,
  options: OPTIONS,
  async run({ args, env, io }) {
    const parsed = parseCommandArgs({ args, io }, USAGE, OPTIONS);
    if (!parsed) return EXIT.ok;
    const { values, positionals } = parsed;
    const format = outputFormat(values);
    if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}`);
    const query = listQuery(values);
    const answer = await callApi(env, {
      method: "GET",
      path: `/api/v1/sessions${query.size > 0 ? `?${query}` : ""}`,
      schema: SessionListResponseSchema,
    });
    io.out(format === "json" ? jsonText(answer) : formatSessionList(answer));
    return EXIT.ok;
  },
};
