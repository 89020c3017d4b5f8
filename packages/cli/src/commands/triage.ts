import {
  type SessionSummary,
  type TriageGroupResponse,
  TriageGroupResponseSchema,
  TriageGroupSchema,
  TriageQuerySchema,
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

const USAGE = `Usage: tarsy triage [group] [--assignee NAME | --unassigned] [--page N] [--page-size N]

One triage group a page at a time (GET /api/v1/sessions/triage/:group): the sessions that
still run (investigating), wait for a reviewer (needs_review, the default), are being
reviewed (in_progress) or were reviewed (reviewed), most recently ended first.

Options:
      --assignee NAME    only sessions assigned to NAME
      --unassigned       only sessions nobody is assigned to
  -p, --page N           page N (default 1)
      --page-size N      sessions per page (default 20, at most 200)
  -o, --output FORMAT    text (a table) or json (the API's answer)
      --json             same as --output json
  -h, --help             show this help

Environment: TARSY_API_URL (default http://127.0.0.1:8080)
`;

const OPTIONS = {
  assignee: { type: "string" },
  unassigned: { type: "boolean" },
  page: { type: "string", short: "p" },
  "page-size": { type: "string" },
  ...OUTPUT_OPTIONS,
  ...HELP_OPTION,
} as const;

const COLUMNS = ["ID", "STATUS", "TYPE", "REVIEW", "ASSIGNEE", "RATING", "ENDED"] as const;

const cells = (s: SessionSummary): string[] => [
  s.id,
  s.status,
  s.alert_type,
  s.review_status ?? "-",
  s.assignee ?? "-",
  s.quality_rating ?? "-",
  s.completed_at ?? "-",
];

/** The group as an aligned table, then "page P of N, T sessions". */
export function formatTriage(answer: TriageGroupResponse): string {
  const total = answer.count;
  const footer = `${answer.group}: page ${answer.page} of ${Math.max(answer.total_pages, 1)}, ${total} session${total === 1 ? "" : "s"}\n`;
  if (answer.sessions.length === 0) return `No sessions in ${answer.group}.\n${footer}`;
  const rows = [COLUMNS as readonly string[], ...answer.sessions.map(cells)];
  const widths = COLUMNS.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  const lines = rows.map((r) =>
    r
      .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd(),
  );
  return `${lines.join("\n")}\n${footer}`;
}

export const triageCommand: Command = {
  path: ["triage"],
  summary: "the review queue: one triage group of sessions, a page at a time",
  usage: USAGE,
  options: OPTIONS,
  async run({ args, env, io }) {
    const parsed = parseCommandArgs({ args, io }, USAGE, OPTIONS);
    if (!parsed) return EXIT.ok;
    const { values, positionals } = parsed;
    const format = outputFormat(values);
    if (positionals.length > 1) throw new UsageError(`unexpected argument ${positionals[1]}`);
    const group = TriageGroupSchema.safeParse(positionals[0] ?? "needs_review");
    if (!group.success) {
      throw new UsageError(
        `unknown group "${positionals[0]}"; one of ${TriageGroupSchema.options.join(", ")}`,
      );
    }
    if (values.unassigned && values.assignee !== undefined) {
      throw new UsageError("--assignee contradicts --unassigned");
    }
    const raw: Record<string, string> = {};
    if (values.unassigned) raw.assignee = "";
    if (values.assignee !== undefined) raw.assignee = values.assignee;
    if (values.page !== undefined) raw.page = values.page;
    if (values["page-size"] !== undefined) raw.page_size = values["page-size"];
    const query = TriageQuerySchema.safeParse(raw);
    if (!query.success) {
      const issue = query.error.issues[0];
      const name = issue?.path[0] === "page_size" ? "--page-size" : `--${String(issue?.path[0])}`;
      throw new UsageError(`${name}: ${issue?.message ?? "invalid"}`);
    }
    const search = new URLSearchParams(raw);
    const answer = await callApi(env, {
      method: "GET",
      path: `/api/v1/sessions/triage/${group.data}${search.size > 0 ? `?${search}` : ""}`,
      schema: TriageGroupResponseSchema,
    });
    io.out(format === "json" ? jsonText(answer) : formatTriage(answer));
    return EXIT.ok;
  },
};
