import { SessionDeleteResponseSchema } from "@tarsy/contracts";
import { SESSION_ACTION_OPTIONS, sessionActionCommand } from "./session-action.ts";

export const sessionDeleteCommand = sessionActionCommand({
  verb: "delete",
  summary: "delete a session that has ended",
  usage: `Usage: tarsy session delete <session-id>

Deletes a session that has ended (DELETE /api/v1/sessions/:id): it disappears from every list,
search and lookup at once, and dashboards drop it. The retention job erases its data after
system.retention.hard_delete_after (default 30 days).

Exit codes: 0 deleted; 1 no such session (or deleted already), the session is still running
(cancel it first, or wait for it to end), or the API could not be reached; 2 bad arguments.

${SESSION_ACTION_OPTIONS}`,
  method: "DELETE",
  suffix: "",
  schema: SessionDeleteResponseSchema,
  describe: (answer) => `session ${answer.session_id}: deleted at ${answer.deleted_at}`,
  conflict: "the session is still running",
});
