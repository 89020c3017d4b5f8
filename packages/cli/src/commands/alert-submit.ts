import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { type AlertSubmitRequest, AlertSubmitResponseSchema } from "@tarsy/contracts";
import { callApi } from "../api.ts";
import { type Command, EXIT, UsageError } from "../command.ts";
import { InputError } from "../errors.ts";

const USAGE = `Usage: tarsy alert submit <file|-> [--type TYPE] [--runbook URL] [--json]

Submits an alert to POST /api/v1/alerts and prints the new session's id. The file (or stdin
with "-") holds the alert data: a JSON document is sent as JSON, anything else as text.

Options:
  -t, --type TYPE      alert type (default: the configured default alert type)
  -r, --runbook URL    runbook URL for this alert
      --json           print the API's answer as JSON
  -h, --help           show this help

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

export const alertSubmitCommand: Command = {
  path: ["alert", "submit"],
  summary: "submit an alert from a file or stdin; prints the session id",
  usage: USAGE,
  async run({ args, env, io }) {
    const { values, positionals } = parseArgs({
      args,
      options: {
        type: { type: "string", short: "t" },
        runbook: { type: "string", short: "r" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: true,
    });
    if (values.help) {
      io.out(USAGE);
      return EXIT.ok;
    }
    if (positionals.length !== 1) throw new UsageError("give exactly one file, or - for stdin");
    const body: AlertSubmitRequest = {
      data: alertData(readInput(positionals[0] as string)),
      ...(values.type !== undefined && { alert_type: values.type }),
      ...(values.runbook !== undefined && { runbook: values.runbook }),
    };
    const answer = await callApi(env, {
      method: "POST",
      path: "/api/v1/alerts",
      body,
      schema: AlertSubmitResponseSchema,
    });
    io.out(values.json ? `${JSON.stringify(answer)}\n` : `${answer.session_id}\n`);
    return EXIT.ok;
  },
};
