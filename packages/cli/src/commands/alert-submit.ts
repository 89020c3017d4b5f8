import { readFileSync } from "node:fs";
import {
  type AlertSubmitRequest,
  AlertSubmitResponseSchema,
  type McpSelection,
  McpSelectionSchema,
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
import { InputError } from "../errors.ts";

const USAGE = `Usage: tarsy alert submit <file|-> [--type TYPE] [--runbook URL] [--mcp SERVER[:TOOL,...]]...

Submits an alert to POST /api/v1/alerts and prints the new session's id. The file (or stdin
with "-") holds the alert data: a JSON document is sent as JSON, anything else as text.

Options:
  -t, --type TYPE              alert type (default: the configured default alert type)
  -r, --runbook URL            runbook URL for this alert
  -m, --mcp SERVER[:TOOL,...]  MCP servers the agents may use for this alert, instead of the
                               configured ones; repeat for several servers. With tools, only
                               those tools of the server (e.g. --mcp kubernetes:pods_list,pods_log)
  -o, --output FORMAT          text (the session id) or json (the API's answer)
      --json                   same as --output json
  -h, --help                   show this help

Environment: TARSY_API_URL (default http://127.0.0.1:8080)
`;

function readInput(source: string): string {
  try {
    return source === "-" ? readFileSync(0, "utf8") : readFileSync(source, "utf8");
  } catch (error) {
    throw new InputError(
      `cannot read ${source === "-" ? "stdin" : source}: ${(error as Error).message}`,
    );
  }
}

/** The alert data: JSON objects and arrays as JSON, anything else as its text. */
export function alertData(text: string): AlertSubmitRequest["data"] {
  const trimmed = text.trim();
  if (!trimmed) throw new InputError("the alert is empty");
  try {
    const json: unknown = JSON.parse(trimmed);
    if (json !== null && typeof json === "object") return json as AlertSubmitRequest["data"];
  } catch {
    // not JSON: sent as text
  }
  return trimmed;
}

/**
 * The request's `mcp` selection from `--mcp` values: `server` (every tool) or
 * `server:tool,tool`; a server given twice gets the union of its tools.
 */
export function mcpSelection(values: readonly string[]): McpSelection | undefined {
  if (values.length === 0) return undefined;
  const servers = new Map<string, Set<string> | "all">();
  for (const value of values) {
    const colon = value.indexOf(":");
    const name = (colon < 0 ? value : value.slice(0, colon)).trim();
    if (!name) throw new UsageError(`--mcp "${value}" names no server`);
    const tools =
      colon < 0
        ? []
        : value
            .slice(colon + 1)
            .split(",")
            .map((tool) => tool.trim())
            .filter(Boolean);
    if (colon >= 0 && tools.length === 0) {
      throw new UsageError(`--mcp "${value}" names no tool after the colon`);
    }
    const known = servers.get(name);
    if (tools.length === 0 || known === "all") {
      servers.set(name, "all");
    } else {
      servers.set(name, new Set([...(known ?? []), ...tools]));
    }
  }
  return McpSelectionSchema.parse({
    servers: [...servers].map(([name, tools]) =>
      tools === "all" ? { name } : { name, tools: [...tools] },
    ),
  });
}

const OPTIONS = {
  type: { type: "string", short: "t" },
  runbook: { type: "string", short: "r" },
  mcp: { type: "string", short: "m", multiple: true },
  ...OUTPUT_OPTIONS,
  ...HELP_OPTION,
} as const;

export const alertSubmitCommand: Command = {
  path: ["alert", "submit"],
  summary: "submit an alert from a file or stdin; prints the session id",
  usage: USAGE,
  options: OPTIONS,
  async run({ args, env, io }) {
    const parsed = parseCommandArgs({ args, io }, USAGE, OPTIONS);
    if (!parsed) return EXIT.ok;
    const { values, positionals } = parsed;
    const format = outputFormat(values);
    if (positionals.length !== 1) throw new UsageError("give exactly one file, or - for stdin");
    const mcp = mcpSelection(values.mcp ?? []);
    const body: AlertSubmitRequest = {
      data: alertData(readInput(positionals[0] as string)),
      ...(values.type !== undefined && { alert_type: values.type }),
      ...(values.runbook !== undefined && { runbook: values.runbook }),
      ...(mcp && { mcp }),
    };
    const answer = await callApi(env, {
      method: "POST",
      path: "/api/v1/alerts",
      body,
      schema: AlertSubmitResponseSchema,
    });
    io.out(format === "json" ? jsonText(answer) : `${answer.session_id}\n`);
    return EXIT.ok;
  },
};
