/**
 * The notifier: reads session lifecycle events and action requests from the sessions channel
 * (a durable consumer shared by every replica) and sends each notification exactly once per
 * session, target, event and action request, recorded in `notification_deliveries`. Fail-open: a notification that cannot be sent
 * is retried with backoff a bounded number of times, then marked failed; sessions never wait
 * for it and are never changed by it.
 */
import { randomUUID } from "node:crypto";
import type { Bus, ConsumeOptions, WorkConsumer } from "@tarsy/bus";
import type { TarsyConfig } from "@tarsy/config";
import {
  type Action,
  type ActionStatusEvent,
  type NotificationEvent,
  type SessionStatusEvent,
  TERMINAL_SESSION_STATUSES,
} from "@tarsy/contracts";
import {
  type AlertSession,
  actionView,
  claimDelivery,
  claimDueDeliveries,
  type DeliveryClaim,
  getAction,
  getSession,
  markDeliveryFailed,
  markDeliverySent,
  noteDeliveryThread,
  type PrismaClient,
  releaseDelivery,
} from "@tarsy/db";
import { createMetrics, type ServiceMetrics } from "@tarsy/metrics";
import type { Logger } from "@tarsy/runtime";
import { describe, NotifyError } from "./errors.ts";
import { buildTargets, type Target } from "./targets.ts";

export interface NotifierOptions {
  podId: string;
  /** Session events handled at once by this replica. */
  concurrency: number;
  /** How long one send may hold its delivery before it counts as cut short. */
  leaseMs: number;
  /** Attempts per delivery before it is marked failed. */
  maxAttempts: number;
  retryInitialMs: number;
  retryMaxMs: number;
  /** How often due retries and cut-short sends are looked for. */
  sweepIntervalMs: number;
  requestTimeoutMs: number;
  consume?: ConsumeOptions<"notifier">;
}

export interface NotifierResources {
  db: PrismaClient;
  bus: Bus;
  config: TarsyConfig;
  /** Where the Slack token and webhook secrets are read (`token_env`, `secret_env`). */
  env: Readonly<Record<string, string | undefined>>;
  logger: Logger;
  /** Default: a registry of its own that nobody scrapes (tests). */
  metrics?: NotifierMetricSet;
}

export type NotifierMetricSet = Pick<
  ServiceMetrics<"notifier">,
  "notifications" | "notificationDuration"
>;

export interface Notifier {
  /** Sends what is due now (retries, cut-short sends); also runs on its interval. */
  sweep(): Promise<void>;
  /** The targets configured, by key (`slack`, `webhook:<n>`). */
  readonly targets: readonly string[];
  stop(): Promise<void>;
}

/** The notification a session status stands for, if any. */
export function notificationEventOf(
  status: SessionStatusEvent["status"],
): NotificationEvent | null {
  if (status === "in_progress") return "started";
  return TERMINAL_SESSION_STATUSES.includes(status) ? (status as NotificationEvent) : null;
}

export async function startNotifier(
  resources: NotifierResources,
  options: NotifierOptions,
): Promise<Notifier> {
  const { db, bus, config, logger } = resources;
  const metrics = resources.metrics ?? createMetrics("notifier", { processMetrics: false });
  // One holder name per process: a restarted pod is not mistaken for the one that died.
  const owner = `${options.podId}/${randomUUID().slice(0, 8)}`;
  const targets = buildTargets(config, resources.env, {
    timeoutMs: options.requestTimeoutMs,
    logger,
    db,
  });
  const byKey = new Map(targets.map((t) => [t.key, t]));
  const log = logger.child({ component: "notifier" });

  const backoff = (attempts: number) =>
    Math.min(options.retryMaxMs, options.retryInitialMs * 2 ** Math.max(0, attempts - 1));

  const attempt = async (claim: Extract<DeliveryClaim, { kind: "claimed" }>): Promise<void> => {
    const { delivery, inDoubt } = claim;
    const event = delivery.event as NotificationEvent;
    const target = byKey.get(delivery.target);
    const fields = { session_id: delivery.sessionId, target: delivery.target, event };
    if (!target) {
      await markDeliveryFailed(db, delivery.id, "target no longer configured");
      return;
    }
    const session = await getSession(db, delivery.sessionId);
    if (!session) {
      await markDeliveryFailed(db, delivery.id, "session deleted");
      return;
    }
    // An action request is announced as it stands now (masked, as the API shows it).
    let action: Action | undefined;
    if (event === "action_requested") {
      const row = await getAction(db, delivery.subject);
      if (!row) {
        await markDeliveryFailed(db, delivery.id, "action request deleted");
        return;
      }
      action = actionView(row, row.session);
    }
    const stop = metrics.notificationDuration.startTimer({ target: target.kind });
    try {
      if (inDoubt) {
        const found = await target.findSent(session, delivery);
        if (found !== null) {
          await markDeliverySent(db, delivery.id, found);
          metrics.notifications.inc({ target: target.kind, event, outcome: "found" });
          log.info({ ...fields }, "a send cut short had happened; not sending again");
          return;
        }
      }
      const sent = await target.send(
        session,
        delivery,
        event,
        (threadTs) => noteDeliveryThread(db, delivery.id, threadTs),
        action,
      );
      await markDeliverySent(db, delivery.id, sent);
      metrics.notifications.inc({ target: target.kind, event, outcome: "sent" });
      log.info({ ...fields, attempts: delivery.attempts }, "notification sent");
    } catch (err) {
      const error = describe(err);
      const retryable = !(err instanceof NotifyError) || err.retryable;
      if (retryable && delivery.attempts < options.maxAttempts) {
        const delayMs = backoff(delivery.attempts);
        await releaseDelivery(db, delivery.id, error, new Date(Date.now() + delayMs));
        metrics.notifications.inc({ target: target.kind, event, outcome: "retry" });
        log.warn(
          { ...fields, attempts: delivery.attempts, retry_in_ms: delayMs, error },
          "notification not sent; will retry",
        );
      } else {
        await markDeliveryFailed(db, delivery.id, error);
        metrics.notifications.inc({ target: target.kind, event, outcome: "failed" });
        log.error(
          { ...fields, attempts: delivery.attempts, error },
          "notification failed; giving up",
        );
      }
    } finally {
      stop();
    }
  };

  /** Claims the event's delivery to every target that wants it, then sends them. */
  const announce = async (
    sessionId: string,
    event: NotificationEvent,
    subject?: string,
  ): Promise<void> => {
    if (targets.length === 0) return;
    const session = await getSession(db, sessionId);
    if (!session) return;
    // Every delivery is claimed before any is sent: should this process die mid-send, each one
    // is picked up by a sweep once its lease runs out, without waiting for a redelivery.
    const claims: Extract<DeliveryClaim, { kind: "claimed" }>[] = [];
    for (const target of targets) {
      if (!target.wants(event, session)) continue;
      const claim = await claimDelivery(
        db,
        { sessionId: session.id, target: target.key, event, ...(subject ? { subject } : {}) },
        owner,
        options.leaseMs,
      );
      // done: sent before (a redelivery); busy: another replica is on it, or a retry is due later.
      if (claim.kind === "claimed") claims.push(claim);
    }
    await Promise.all(claims.map(attempt));
  };

  const onStatus = async (payload: SessionStatusEvent): Promise<void> => {
    const event = notificationEventOf(payload.status);
    if (event) await announce(payload.session_id, event);
  };

  /** A request that waits for a person is announced once; auto-approved ones are not. */
  const onAction = async (payload: ActionStatusEvent): Promise<void> => {
    const { action } = payload;
    if (action.approval_mode !== "required" || action.status !== "pending") return;
    await announce(payload.session_id, "action_requested", action.id);
  };

  const consumer: WorkConsumer = await bus.consume(
    "notifier",
    {
      sessionStatus: (payload) => onStatus(payload),
      // A deleted session's pending deliveries fail on their next attempt (session deleted).
      sessionDeleted: async () => {},
      // Review and score changes share the sessions subject; nothing is sent for them.
      reviewStatus: async () => {},
      sessionScoreUpdated: async () => {},
      actionStatus: (payload) => onAction(payload),
    },
    { concurrency: options.concurrency, ...options.consume },
  );

  let sweeping: Promise<void> | null = null;
  const sweep = (): Promise<void> => {
    sweeping ??= (async () => {
      try {
        for (;;) {
          const due = await claimDueDeliveries(db, owner, options.leaseMs, 10);
          for (const claim of due) await attempt(claim);
          if (due.length < 10) return;
        }
      } catch (err) {
        log.error({ err }, "notification sweep failed");
      } finally {
        sweeping = null;
      }
    })();
    return sweeping;
  };
  const timer = setInterval(() => void sweep(), options.sweepIntervalMs);
  timer.unref();
  log.info({ targets: targets.map((t) => t.key) }, "notifier started");

  return {
    sweep,
    targets: targets.map((t) => t.key),
    async stop() {
      clearInterval(timer);
      await consumer.stop();
      await sweeping;
    },
  };
}

export type { AlertSession, Target };
