import {
  MAX_REVIEW_SESSION_IDS,
  ReviewActionSchema,
  UpdateReviewRequestSchema,
  type UpdateReviewResponse,
  UpdateReviewResponseSchema,
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

const USAGE = `Usage: tarsy session review <action> <session-id>... [--rating R] [--action-taken TEXT] [--feedback TEXT] [--reassign]

Changes the team's review of ended sessions (PATCH /api/v1/sessions/review), each session on
its own, as you (the identity TARSy sees: TARSY_TOKEN, TARSY_USER or the proxy's cookie).
Prints one line per session: its new review state, or why not (not_found, forbidden, conflict).

Actions:
  claim            needs_review → in_progress, assigned to you
                   (with --reassign: take over a session someone else has in progress)
  unclaim          in_progress → needs_review, unassigned
  complete         needs_review or in_progress → reviewed; needs --rating
  acknowledge      needs_review or in_progress → reviewed without a rating
  reopen           reviewed → needs_review (rating and feedback cleared)
  update_feedback  change --rating, --action-taken or --feedback of a reviewed session

Options:
      --rating R          accurate, partially_accurate or inaccurate
      --action-taken TEXT what was done about the alert
      --feedback TEXT     why the investigation was good or bad
      --reassign          claim: take the session over from its assignee
  -o, --output FORMAT     text or json (the API's answer)
      --json              same as --output json
  -h, --help              show this help

Exit codes: 0 every session changed; 1 some did not (or the API refused the request or
could not be reached); 2 bad arguments. At most ${MAX_REVIEW_SESSION_IDS} session ids.

Environment: TARSY_API_URL (default http://127.0.0.1:8080)
`;

const OPTIONS = {
  rating: { type: "string" },
  "action-taken": { type: "string" },
  feedback: { type: "string" },
  reassign: { type: "boolean" },
  ...OUTPUT_OPTIONS,
  ...HELP_OPTION,
} as const;

const OPTION_OF: Record<string, string> = {
  quality_rating: "--rating",
  action_taken: "--action-taken",
  investigation_feedback: "--feedback",
  session_ids: "session ids",
  action: "action",
};

/** One line per session: `<id>  <state> [assignee] [rating]`, or `<id>  failed: <why>`. */
export function formatReviewResults(answer: UpdateReviewResponse): string {
  const width = Math.max(...answer.results.map((r) => r.session_id.length));
  return answer.results
    .map((r) => {
      const id = r.session_id.padEnd(width);
      if (!r.success || !r.review) return `${id}  failed: ${r.error ?? "unknown"}\n`;
      const { review_status, assignee, quality_rating } = r.review;
      const extra = [
        assignee && `assignee ${assignee}`,
        quality_rating && `rated ${quality_rating}`,
      ]
        .filter(Boolean)
        .join(", ");
      return `${id}  ${review_status}${extra ? ` (${extra})` : ""}\n`;
    })
    .join("");
}

export const sessionReviewCommand: Command = {
  path: ["session", "review"],
  summary: "claim, complete, acknowledge, reopen or give feedback on ended sessions",
  usage: USAGE,
  options: OPTIONS,
  async run({ args, env, io }) {
    const parsed = parseCommandArgs({ args, io }, USAGE, OPTIONS);
    if (!parsed) return EXIT.ok;
    const { values, positionals } = parsed;
    const format = outputFormat(values);
    const [action, ...ids] = positionals;
    if (action === undefined) throw new UsageError("give an action and at least one session id");
    if (!ReviewActionSchema.safeParse(action).success) {
      throw new UsageError(
        `unknown action "${action}"; one of ${ReviewActionSchema.options.join(", ")}`,
      );
    }
    if (ids.length === 0) throw new UsageError("give at least one session id");
    // Checked against the API's own schema, so a mistake is said before asking.
    const request = UpdateReviewRequestSchema.safeParse({
      session_ids: ids,
      action,
      ...(values.rating !== undefined && { quality_rating: values.rating }),
      ...(values["action-taken"] !== undefined && { action_taken: values["action-taken"] }),
      ...(values.feedback !== undefined && { investigation_feedback: values.feedback }),
      ...(values.reassign && { reassign: true }),
    });
    if (!request.success) {
      const issue = request.error.issues[0];
      const name = OPTION_OF[String(issue?.path[0])] ?? String(issue?.path[0]);
      throw new UsageError(`${name}: ${issue?.message ?? "invalid"}`);
    }
    const answer = await callApi(env, {
      method: "PATCH",
      path: "/api/v1/sessions/review",
      body: request.data,
      schema: UpdateReviewResponseSchema,
    });
    io.out(format === "json" ? jsonText(answer) : formatReviewResults(answer));
    return answer.results.every((r) => r.success) ? EXIT.ok : EXIT.failed;
  },
};
