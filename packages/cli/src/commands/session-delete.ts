import { SessionDeleteResponseSchema } from "@tarsy/contracts";
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

const USAGE = `Usage: tarsy session delete <session-id>

Deletes a session that has ended (DELETE /api/v1/sessions/:id): it disappears from every list,
search and lookup at once, and dashboards drop it. The retention job erases its data after
system.retention.hard_delete_after (default 30 days).

Exit codes: 0 deleted; 1 no such session (or deleted already), the session is still running
(cancel it first, or wait for it to end), or the API could not be reached; 2 bad arguments.

Options:
  -o, --output FORMAT   text or json (the API's answer)
      --json            same as --output json
  -h, --help            show this help

Environment: TARSY_API_URL (default http://127.0.0.1:8080)
`;

const OPTIONS = { ...OUTPUT_OPTIONS, ...HELP_OPTION } as const;

export const sessionDeleteCommand: Command = {
  path: ["session", "delete"],
  summary: "delete a session that has ended",
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
        method: "DELETE",
        path: `/api/v1/sessions/${encodeURIComponent(id)}`,
        schema: SessionDeleteResponseSchema,
      });
      io.out(
        format === "json"
          ? jsonText(answer)
          : `session ${answer.session_id}: deleted at ${answer.deleted_at}\n`,
      );
      return EXIT.ok;
    } catch (error) {
      if (!(error instanceof ApiRequestError)) throw error;
      if (error.status === 404) {
        io.err(`tarsy session delete: no session ${id} (${error.message})\n`);
        return EXIT.failed;
      }
      if (error.status === 409) {
        io.err(`tarsy session delete: the session is still running: ${error.apiMessage}\n`);
        return EXIT.failed;
      }
      throw error;
    }
  },
};
