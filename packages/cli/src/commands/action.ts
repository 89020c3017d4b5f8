import {
  type Action,
  type ActionList,
  ActionListQuerySchema,
  ActionListSchema,
  ActionSchema,
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

const ENV_NOTE =
  "Environment: TARSY_API_URL (default http://127.0.0.1:8080), TARSY_USER or TARSY_TOKEN (who decides)\n";

const LIST_USAGE = `Usage: tarsy action list [--status S] [--session ID] [--limit N]

Action requests (GET /api/v1/actions), newest first: the mutating tool calls of action agents,
each waiting for a person's decision (pending) or decided. Without --status: pending ones.

Options:
      --status S         pending (default), approved, denied, expired, cancelled or all
  -s, --session ID       only the requests of this session
      --limit N          at most N requests (default 100)
  -o, --output FORMAT    text (a table) or json (the API's answer)
      --json             same as --output json
  -h, --help             show this help

${ENV_NOTE}`;

const LIST_OPTIONS = {
  status: { type: "string" },
  session: { type: "string", short: "s" },
  limit: { type: "string" },
  ...OUTPUT_OPTIONS,
  ...HELP_OPTION,
} as const;

const COLUMNS = [
  "ID",
  "STATUS",
  "CALL",
  "AGENT",
  "TOOL",
  "ARGUMENTS",
  "REQUESTED",
  "EXPIRES",
] as const;

const oneLine = (text: string, width: number): string => {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > width ? `${flat.slice(0, width - 1)}…` : flat;
};

/** The requests as an aligned table. */
export function formatActionList(answer: ActionList): string {
  if (answer.actions.length === 0) return "No action requests.\n";
  const rows = [
    COLUMNS as readonly string[],
    ...answer.actions.map((a) => [
      a.id,
      a.status,
      a.call_status,
      a.agent_name,
      a.tool_name,
      oneLine(JSON.stringify(a.arguments), 40),
      a.requested_at,
      a.expires_at ?? "-",
    ]),
  ];
  const widths = COLUMNS.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return `${rows
    .map((r) =>
      r
        .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
        .join("  ")
        .trimEnd(),
    )
    .join("\n")}\n`;
}

/** One request: its fields, then the agent's reason, its dry run and the call's result in full. */
export function formatAction(a: Action): string {
  const fields: [string, string][] = [
    ["Action", a.id],
    ["Session", a.session_id],
    ["Agent", a.agent_name],
    ["Tool", a.tool_name],
    ["Arguments", JSON.stringify(a.arguments)],
    ["Status", a.status],
    ["Requested", `${a.requested_at}${a.requested_by ? ` (alert by ${a.requested_by})` : ""}`],
    ["Expires", a.expires_at ?? "-"],
    ["Decided", a.decided_at ? `${a.decided_at} by ${a.decided_by}` : "-"],
    ["Comment", a.comment ?? "-"],
    ["Call", a.call_status.replace("_", " ")],
  ];
  const width = Math.max(...fields.map(([k]) => k.length));
  const dryRun = a.dry_run ? `\nDry run (${a.dry_run.status}):\n${a.dry_run.result}\n` : "";
  const result = a.result === null ? "" : `\nResult:\n${a.result}\n`;
  return `${fields.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join("\n")}\n\nReason:\n${a.reason}\n${dryRun}${result}`;
}

export const actionListCommand: Command = {
  path: ["action", "list"],
  summary: "list action requests (pending ones by default)",
  usage: LIST_USAGE,
  options: LIST_OPTIONS,
  async run({ args, env, io }) {
    const parsed = parseCommandArgs({ args, io }, LIST_USAGE, LIST_OPTIONS);
    if (!parsed) return EXIT.ok;
    const { values, positionals } = parsed;
    const format = outputFormat(values);
    if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}`);
    const raw: Record<string, string> = {};
    const status = values.status ?? "pending";
    if (status !== "all") raw.status = status;
    if (values.session !== undefined) raw.session_id = values.session;
    if (values.limit !== undefined) raw.limit = values.limit;
    const checked = ActionListQuerySchema.safeParse(raw);
    if (!checked.success) {
      const issue = checked.error.issues[0];
      const flag = { status: "--status", session_id: "--session", limit: "--limit" }[
        String(issue?.path[0])
      ];
      throw new UsageError(`${flag ?? String(issue?.path[0])}: ${issue?.message ?? "invalid"}`);
    }
    const query = new URLSearchParams(raw);
    const answer = await callApi(env, {
      method: "GET",
      path: `/api/v1/actions${query.size > 0 ? `?${query}` : ""}`,
      schema: ActionListSchema,
    });
    io.out(format === "json" ? jsonText(answer) : formatActionList(answer));
    return EXIT.ok;
  },
};

const ONE_OPTIONS = { ...OUTPUT_OPTIONS, ...HELP_OPTION } as const;
const DECIDE_OPTIONS = { comment: { type: "string", short: "m" }, ...ONE_OPTIONS } as const;

const path = (id: string) => `/api/v1/actions/${encodeURIComponent(id)}`;

export const actionShowCommand: Command = {
  path: ["action", "show"],
  summary: "show one action request",
  usage: `Usage: tarsy action show <action-id>

One action request (GET /api/v1/actions/:id): the tool, its arguments (masked), the agent's
reason, the decision and the call's outcome.

Exit codes: 0 shown; 1 no such request, or the API could not be reached; 2 bad arguments.

Options:
  -o, --output FORMAT   text or json
      --json            same as --output json
  -h, --help            show this help

${ENV_NOTE}`,
  options: ONE_OPTIONS,
  async run({ args, env, io }) {
    const parsed = parseCommandArgs({ args, io }, this.usage, ONE_OPTIONS);
    if (!parsed) return EXIT.ok;
    const { values, positionals } = parsed;
    if (positionals.length !== 1) throw new UsageError("give exactly one action id");
    const action = await callApi(env, {
      method: "GET",
      path: path(positionals[0] as string),
      schema: ActionSchema,
    });
    io.out(outputFormat(values) === "json" ? jsonText(action) : formatAction(action));
    return EXIT.ok;
  },
};

function decideCommand(verb: "approve" | "deny"): Command {
  const usage = `Usage: tarsy action ${verb} <action-id> [-m COMMENT]

${verb === "approve" ? "Approves" : "Denies"} a pending action request (POST /api/v1/actions/:id/${verb}), once: the
agent's execution resumes${verb === "approve" ? " and the call is made, once" : " and is told who denied it and why"}. Your
identity is recorded as the decider; it needs the approve permission in the session's project
(with four eyes on, whoever submitted the alert may not approve).

Exit codes: 0 decided; 1 no such request, decided already, not allowed, or the API could not
be reached; 2 bad arguments.

Options:
  -m, --comment TEXT    why (shown to the agent and kept in the audit record)
  -o, --output FORMAT   text or json
      --json            same as --output json
  -h, --help            show this help

${ENV_NOTE}`;
  return {
    path: ["action", verb],
    summary: `${verb} a pending action request`,
    usage,
    options: DECIDE_OPTIONS,
    async run({ args, env, io }) {
      const parsed = parseCommandArgs({ args, io }, usage, DECIDE_OPTIONS);
      if (!parsed) return EXIT.ok;
      const { values, positionals } = parsed;
      if (positionals.length !== 1) throw new UsageError("give exactly one action id");
      const action = await callApi(env, {
        method: "POST",
        path: `${path(positionals[0] as string)}/${verb}`,
        body: values.comment === undefined ? {} : { comment: values.comment },
        schema: ActionSchema,
      });
      io.out(
        outputFormat(values) === "json"
          ? jsonText(action)
          : `action ${action.id}: ${action.status} by ${action.decided_by}\n`,
      );
      return EXIT.ok;
    },
  };
}

export const actionApproveCommand = decideCommand("approve");
export const actionDenyCommand = decideCommand("deny");
