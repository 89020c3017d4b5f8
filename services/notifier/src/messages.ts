/** The Slack messages, in the Go TARSy's format (Block Kit). */
import { type Action, describeCancel, type NotificationEvent } from "@tarsy/contracts";

/** Slack accepts 3,000 characters in a section's text; leave room for the notice. */
export const MAX_BLOCK_TEXT = 2900;
const TRUNCATED = "\n\n_... (truncated — view full analysis in dashboard)_";

type Outcome = Exclude<NotificationEvent, "started" | "action_requested">;

const OUTCOMES: Record<Outcome, { emoji: string; label: string }> = {
  completed: { emoji: ":white_check_mark:", label: "Analysis Complete" },
  failed: { emoji: ":x:", label: "Analysis Failed" },
  timed_out: { emoji: ":hourglass:", label: "Analysis Timed Out" },
  cancelled: { emoji: ":no_entry_sign:", label: "Analysis Cancelled" },
};

export interface SlackMessage {
  /** The notification's plain text (what a phone shows). */
  text: string;
  blocks: Record<string, unknown>[];
}

export interface SessionFacts {
  id: string;
  alertType: string;
  executiveSummary: string | null;
  /** The session's labels (null: unlabelled; `[]`: none applied). */
  labels: readonly string[] | null;
  finalAnalysis: string | null;
  errorMessage: string | null;
  /** Who cancelled (or stopped) the session and why, when recorded. */
  cancelledBy: string | null;
  cancelReason: string | null;
}

export function sessionUrl(dashboardUrl: string | undefined, sessionId: string): string | null {
  if (!dashboardUrl) return null;
  return `${dashboardUrl.replace(/\/+$/, "")}/sessions/${sessionId}`;
}

/** Cuts at a code point, never inside a surrogate pair. */
export function truncateForSlack(text: string): string {
  const chars = Array.from(text);
  return chars.length <= MAX_BLOCK_TEXT
    ? text
    : chars.slice(0, MAX_BLOCK_TEXT).join("") + TRUNCATED;
}

const section = (text: string) => ({ type: "section", text: { type: "mrkdwn", text } });

export function startedMessage(session: SessionFacts, url: string | null): SlackMessage {
  const link = url ? `\n<${url}|View in Dashboard>` : "";
  return {
    text: `Processing started: ${session.alertType}`,
    blocks: [
      section(
        `:arrows_counterclockwise: *Processing started* — this may take a few minutes.${link}`,
      ),
    ],
  };
}

export function terminalMessage(
  outcome: Outcome,
  session: SessionFacts,
  url: string | null,
): SlackMessage {
  const { emoji, label } = OUTCOMES[outcome];
  const header = `${emoji} *${label}*`;
  const blocks: Record<string, unknown>[] = [];
  // Labels lead the message so a channel rule (or a reader) can route on them.
  const labels = outcome === "completed" && session.labels?.length ? session.labels : [];
  if (outcome === "completed") {
    const tags = labels.map((label) => `\`${label}\``).join(" ");
    blocks.push(section(labels.length > 0 ? `${header}\n*Labels:* ${tags}` : header));
    const content = session.executiveSummary || session.finalAnalysis;
    if (content) blocks.push(section(truncateForSlack(content)));
  } else if (outcome === "cancelled") {
    // A cancellation, never an error: who cancelled and why (nothing more for older sessions).
    const by = describeCancel({
      cancelled_by: session.cancelledBy,
      cancel_reason: session.cancelReason,
    });
    blocks.push(section(by ? `${header}\n\n${truncateForSlack(by)}` : header));
  } else {
    const error = session.errorMessage
      ? `\n\n*Error:*\n${truncateForSlack(session.errorMessage)}`
      : "";
    blocks.push(section(`${header}${error}`));
  }
  if (url) {
    blocks.push({
      type: "actions",
      elements: [
        {
          type: "button",
          text: {
            type: "plain_text",
            text: outcome === "completed" ? "View Full Analysis" : "View Details",
          },
          url,
        },
      ],
    });
  }
  const suffix = labels.length > 0 ? ` [labels: ${labels.join(", ")}]` : "";
  return { text: `${label}: ${session.alertType}${suffix}`, blocks };
}

/** How much of a request's arguments and reason a Slack message shows. */
const MAX_ARGUMENTS = 1500;
const MAX_REASON = 1000;

const clip = (text: string, max: number) => {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, max).join("")}…`;
};

/** An action request waiting for a decision: the exact call, the agent's reason, the deadline. */
export function actionRequestedMessage(
  action: Pick<
    Action,
    "id" | "agent_name" | "tool_name" | "arguments" | "reason" | "expires_at" | "dry_run"
  >,
  alertType: string,
  url: string | null,
): SlackMessage {
  // Backticks would end the code block early: shown as look-alikes.
  const args = clip(JSON.stringify(action.arguments, null, 2), MAX_ARGUMENTS).replaceAll("`", "ˋ");
  const reason = action.reason.trim() ? clip(action.reason.trim(), MAX_REASON) : "(none given)";
  const deadline = action.expires_at
    ? `\n*Counts as denied at:* ${action.expires_at}`
    : "\n*Counts as denied at:* never (no timeout)";
  const blocks: Record<string, unknown>[] = [
    section(
      `:raised_hand: *Approval needed* — ${action.agent_name} wants to run \`${action.tool_name}\`${deadline}`,
    ),
    section(`*Arguments:*\n\`\`\`${args}\`\`\``),
    section(`*Agent's reason:*\n${reason}`),
    ...(action.dry_run
      ? [
          section(
            `*Dry run (${action.dry_run.status}):*\n\`\`\`${clip(action.dry_run.result, MAX_ARGUMENTS).replaceAll("`", "ˋ")}\`\`\``,
          ),
        ]
      : []),
    section(
      `Decide in the dashboard, or: \`tarsy action approve ${action.id}\` / \`tarsy action deny ${action.id}\``,
    ),
  ];
  if (url) {
    blocks.push({
      type: "actions",
      elements: [{ type: "button", text: { type: "plain_text", text: "Review and Decide" }, url }],
    });
  }
  return { text: `Approval needed: ${action.tool_name} (${alertType})`, blocks };
}
