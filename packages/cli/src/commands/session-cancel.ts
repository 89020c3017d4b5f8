import {
  CancelResponseSchema,
  MAX_CANCEL_REASON_CHARS,
  normalizeCancelReason,
} from "@tarsy/contracts";
import { UsageError } from "../command.ts";
import { SESSION_ACTION_OPTIONS, sessionActionCommand } from "./session-action.ts";

export const sessionCancelCommand = sessionActionCommand({
  verb: "cancel",
  summary: "cancel a running session (or its running chat answer)",
  usage: `Usage: tarsy session cancel <session-id> [--reason TEXT]

Asks TARSy to cancel a running or queued session, or the chat answer running in a finished
one (POST /api/v1/sessions/:id/cancel), and prints what the API answered. The cancel happens
shortly after: "tarsy session watch <id>" follows it to the end (exit code 4, cancelled).
The session records who cancelled it (you: TARSY_USER or the API token's identity) and the
reason; "tarsy session show" prints them ("Cancelled by alice: duplicate of INC-123").

Exit codes: 0 cancel requested; 1 no such session, nothing to cancel (the session already
ended), or the API could not be reached; 2 bad arguments (a reason over ${MAX_CANCEL_REASON_CHARS} characters).

  -r, --reason TEXT     why (optional, at most ${MAX_CANCEL_REASON_CHARS} characters)
${SESSION_ACTION_OPTIONS}`,
  method: "POST",
  suffix: "/cancel",
  schema: CancelResponseSchema,
  describe: (answer) => `session ${answer.session_id}: ${answer.status.replace("_", " ")}`,
  conflict: "nothing to cancel",
  options: { reason: { type: "string", short: "r" } },
  body(values) {
    const reason = normalizeCancelReason(values.reason as string | undefined);
    if (reason === null) return undefined;
    const length = Array.from(reason).length;
    if (length > MAX_CANCEL_REASON_CHARS) {
      throw new UsageError(
        `--reason is ${length} characters; at most ${MAX_CANCEL_REASON_CHARS} are kept`,
      );
    }
    return { reason };
  },
});
