import { CancelResponseSchema } from "@tarsy/contracts";
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
import { ApiRequestError } from "../errors.ts";

const USAGE = `Usage: tarsy session cancel <session-id>

Asks TARSy to cancel a running session, or the chat answer running in a finished one
(POST /api/v1/sessions/:id/cancel), and prints what the API answered. The cancel happens
shortly after: "tarsy session watch <id>" follows it to the end (exit code 4, cancelled).

Exit codes: 0 cancel requested; 1 no such session, nothing to cancel (the session already
ended), or the API could not be reached; 2 bad arguments.

Options:
  -o, --output FORMAT   text or json (the API's answer)
      --json            same as --output json
  -h, --help            show this help

Environment: TARSY_API_URL (default http://127.0.0.1:8080)
`;

const OPTIONS = { ...OUTPUT_OPTIONS, ...HELP_OPTION } as const;

export const sessionCancelCommand: Command = {
  path: ["session", "cancel"],
  summary: "cancel a running session (or its running chat answer)",
  usage: USAGE,
  options: OPTIONS,
  async run({ args, env, io }) {
    const parsed = parseCommandArgs({ args, io }, USAGE, OPTIONS);
    if (!parsed) return EXIT.ok;
    const { values, positionals } = parsed;
    const format = outputFormat(values);
    if (positionals.length !== 1) throw new UsageError("give exactly one session id");
    const id = positionals[0] as string;
    try {
      const answer = await callApi(env, {
        method: "POST",
        path: `/api/v1/sessions/${encodeURIComponent(id)}/cancel`,
        schema: CancelResponseSchema,
      });
      io.out(
        format === "json"
          ? jsonText(answer)
          : `session ${answer.session_id}: ${answer.status.replace("_", " ")}\n`,
      );
      return EXIT.ok;
    } catch (error) {
      if (!(error instanceof ApiRequestError)) throw error;
      if (error.status === 404) {
        io.err(`tarsy session cancel: no session ${id} (${error.message})\n`);
        return EXIT.failed;
      }
      if (error.status === 409) {
        io.err(`tarsy session cancel: nothing to cancel: ${error.apiMessage}\n`);
        return EXIT.failed;
      }
      throw error;
    }
  },
};
