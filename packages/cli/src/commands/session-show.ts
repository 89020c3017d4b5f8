import { SessionDetailSchema, TimelineResponseSchema } from "@tarsy/contracts";
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
import { formatSession } from "./session-format.ts";

const USAGE = `Usage: tarsy session show <session-id> [--output json]

Prints a session's summary: status, stages and their agent executions, final analysis,
executive summary and token usage (GET /api/v1/sessions/:id and its timeline).

Options:
  -o, --output FORMAT   text (the summary) or json: {"session": ..., "timeline": ...}, the two
                        answers as the API returns them
      --json            same as --output json
  -h, --help            show this help

Environment: TARSY_API_URL (default http://127.0.0.1:8080)
`;

const OPTIONS = { ...OUTPUT_OPTIONS, ...HELP_OPTION } as const;

export const sessionShowCommand: Command = {
  path: ["session", "show"],
  summary: "print a session's status, stages, analysis and token usage",
  usage: USAGE,
  options: OPTIONS,
  async run({ args, env, io }) {
    const parsed = parseCommandArgs({ args, io }, USAGE, OPTIONS);
    if (!parsed) return EXIT.ok;
    const { values, positionals } = parsed;
    const format = outputFormat(values);
    if (positionals.length !== 1) throw new UsageError("give exactly one session id");
    const id = encodeURIComponent(positionals[0] as string);
    const session = await callApi(env, {
      method: "GET",
      path: `/api/v1/sessions/${id}`,
      schema: SessionDetailSchema,
    });
    const timeline = await callApi(env, {
      method: "GET",
      path: `/api/v1/sessions/${id}/timeline`,
      schema: TimelineResponseSchema,
    });
    io.out(format === "json" ? jsonText({ session, timeline }) : formatSession(session, timeline));
    return EXIT.ok;
  },
};
