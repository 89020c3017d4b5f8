/** Where notifications go: Slack (the Go TARSy's `system.slack`) and generic webhooks. */
import type { TarsyConfig } from "@tarsy/config";
import { type Action, NotificationActionSchema, type NotificationEvent } from "@tarsy/contracts";
import {
  type AlertSession,
  listSessionDeliveries,
  type NotificationDelivery,
  type PrismaClient,
  storedLabels,
} from "@tarsy/db";
import type { Logger } from "@tarsy/runtime";
import {
  actionRequestedMessage,
  type SessionFacts,
  sessionUrl,
  startedMessage,
  terminalMessage,
} from "./messages.ts";
import { SlackChannel } from "./slack.ts";
import { postWebhook } from "./webhook.ts";

export interface Sent {
  messageTs?: string | null;
}

export interface Target {
  /** `slack` or `webhook:<n>`: the delivery rows' target. */
  readonly key: string;
  readonly kind: "slack" | "webhook";
  wants(event: NotificationEvent, session: AlertSession): boolean;
  /**
   * Sends; `noteThread` records the Slack thread before posting (read back when in doubt).
   * `action`: the request an `action_requested` delivery announces.
   */
  send(
    session: AlertSession,
    delivery: NotificationDelivery,
    event: NotificationEvent,
    noteThread: (threadTs: string | null) => Promise<void>,
    action?: Action,
  ): Promise<Sent>;
  /** After a send cut short: what was sent, if it can be known (else null: send again). */
  findSent(session: AlertSession, delivery: NotificationDelivery): Promise<Sent | null>;
}

export const SLACK_TARGET = "slack";
export const webhookTarget = (index: number) => `webhook:${index}`;

const facts = (session: AlertSession): SessionFacts => ({
  id: session.id,
  alertType: session.alertType,
  executiveSummary: session.executiveSummary,
  labels: storedLabels(session.labels),
  finalAnalysis: session.finalAnalysis,
  errorMessage: session.errorMessage,
  cancelledBy: session.cancelledBy,
  cancelReason: session.cancelReason,
});

export function buildTargets(
  config: TarsyConfig,
  env: Readonly<Record<string, string | undefined>>,
  deps: { timeoutMs: number; logger: Logger; db: PrismaClient },
): Target[] {
  const targets: Target[] = [];
  const dashboardUrl = config.system.dashboard_url;
  const { slack } = config.system;
  const token = env[slack.token_env];
  if (slack.enabled && slack.channel && token) {
    targets.push(
      slackTarget(
        new SlackChannel({
          token,
          channel: slack.channel,
          apiUrl: slack.api_url,
          timeoutMs: deps.timeoutMs,
          logger: deps.logger,
        }),
        dashboardUrl,
        deps.db,
      ),
    );
  }
  config.system.notifications.webhooks.forEach((hook, index) => {
    const secret = hook.secret_env ? env[hook.secret_env] : undefined;
    targets.push({
      key: webhookTarget(index),
      kind: "webhook",
      wants: (event) => hook.events.includes(event),
      async send(session, delivery, event, _noteThread, action) {
        await postWebhook(
          hook.url,
          {
            v: 1,
            event,
            delivery_id: delivery.id,
            session_id: session.id,
            status: session.status,
            alert_type: session.alertType,
            chain_id: session.chainId,
            project: session.project,
            author: session.author,
            created_at: session.createdAt.toISOString(),
            started_at: session.startedAt?.toISOString() ?? null,
            completed_at: session.completedAt?.toISOString() ?? null,
            executive_summary: session.executiveSummary,
            labels: storedLabels(session.labels),
            final_analysis: session.finalAnalysis,
            error_message: session.errorMessage,
            cancelled_by: session.cancelledBy,
            cancel_reason: session.cancelReason,
            url: sessionUrl(dashboardUrl, session.id),
            action: action ? NotificationActionSchema.parse(action) : null,
            timestamp: new Date().toISOString(),
          },
          secret,
          deps.timeoutMs,
        );
        return {};
      },
      // A receiver's state cannot be read: send again, with the same delivery id to dedupe on.
      findSent: async () => null,
    });
  });
  return targets;
}

function slackTarget(
  channel: SlackChannel,
  dashboardUrl: string | undefined,
  db: PrismaClient,
): Target {
  /** The thread of the session's conversation: the one its start message went to, else searched. */
  const threadOf = async (session: AlertSession): Promise<string | null> => {
    const deliveries = await listSessionDeliveries(db, session.id);
    const known = deliveries.find((d) => d.target === SLACK_TARGET && d.threadTs);
    if (known?.threadTs) return known.threadTs;
    const fingerprint = session.slackMessageFingerprint;
    return fingerprint ? channel.findThread(fingerprint) : null;
  };
  return {
    key: SLACK_TARGET,
    kind: "slack",
    // As in the Go TARSy, "started" goes only to a conversation (an alert with a fingerprint).
    wants: (event, session) => event !== "started" || Boolean(session.slackMessageFingerprint),
    async send(session, delivery, event, noteThread, action) {
      const threadTs = delivery.threadTs ?? (await threadOf(session));
      await noteThread(threadTs);
      const url = sessionUrl(dashboardUrl, session.id);
      const message =
        event === "action_requested"
          ? actionRequestedMessage(requireAction(action), session.alertType, url)
          : event === "started"
            ? startedMessage(facts(session), url)
            : terminalMessage(event, facts(session), url);
      const ts = await channel.post(message, threadTs, {
        sessionId: session.id,
        event,
        ...(delivery.subject ? { subject: delivery.subject } : {}),
      });
      return { messageTs: ts };
    },
    async findSent(session, delivery) {
      const ts = await channel.findPosted(
        {
          sessionId: session.id,
          event: delivery.event as NotificationEvent,
          ...(delivery.subject ? { subject: delivery.subject } : {}),
        },
        delivery.threadTs,
        delivery.createdAt,
      );
      return ts === null ? null : { messageTs: ts };
    },
  };
}

function requireAction(action: Action | undefined): Action {
  if (!action) throw new Error("an action_requested notification needs its action request");
  return action;
}
