import { CancelResponseSchema } from "@tarsy/contracts";
import { SESSION_ACTION_OPTIONS, sessionActionCommand } from "./session-action.ts";

export const sessionCancelCommand = sessionActionCommand({
  verb: "cancel",
  summary: "cancel a running session (or its running chat answer)",
  usage: `Usage: tarsy session cancel <session-id>

Asks TARSy to cancel a running session, or the chat answer running in a finished one
(POST /api/v1/sessions/:id/cancel), and prints what the API answered. The cancel happens
shortly after: "tarsy session watch <id>" follows it to the end (exit code 4, cancelled).

Exit codes: 0 cancel requested; 1 no such session, nothing to cancel (the session already
ended), or the API could not be reached; 2 bad arguments.

${SESSION_ACTION_OPTIONS}`,
  method: "POST",
  suffix: "/cancel",
  schema: CancelResponseSchema,
  describe: (answer) => `session ${answer.session_id}: ${answer.status.replace("_", " ")}`,
  conflict: "nothing to cancel",
});
