import { findChainForAlertType } from "@tarsy/config";
import type {
  AlertmanagerAlert,
  AlertmanagerIntakeResponse,
  AlertmanagerWebhook,
} from "@tarsy/contracts";
import { ACTIVE_SESSION_STATUSES, FetchableUrlSchema } from "@tarsy/contracts";
import {
  type AlertMatch,
  type CreatedSession,
  createSession,
  findDuplicateAlertSession,
  markAlertResolved,
  type Tx,
  withAlertLock,
} from "@tarsy/db";
import type { IngestResources } from "./deps.ts";
import { HttpError } from "./errors.ts";
import { pendingLimitReached } from "./pending-limit.ts";
import { deliverSession, maskAlertData } from "./submit.ts";

/**
 * Alertmanager intake: each firing alert is investigated once. A firing alert whose
 * fingerprint has a session that is pending, running, or completed within the dedupe window
 * starts nothing; resolved alerts start nothing and are recorded on their session. In
 * per-group mode one session covers a whole group notification, deduplicated by group key.
 * Check-and-create runs under a transaction-scoped advisory lock on the fingerprint (or
 * group key), so concurrent notifications (HA Alertmanager pairs) cannot both create one.
 */

type Created = AlertmanagerIntakeResponse["sessions_created"][number];
type Skipped = AlertmanagerIntakeResponse["alerts_skipped"][number];

/** Where an alert goes: its project, or why it may not go there. */
export type Placement =
  | { project: string; refused?: undefined }
  | { project: string; refused: "unknown_project" | "forbidden_project" };

/** Who sends the notification and where each alert's session belongs. */
export interface Submitter {
  author: string;
  place(labels: Record<string, string>): Placement;
}

/**
 * Ingests one notification. `signal` aborts when the client has gone: per-alert intake then
 * stops between alerts (each alert's session is complete on its own; Alertmanager retries
 * the notification and the dedupe skips what was already created).
 */
export async function ingestNotification(
  deps: IngestResources,
  hook: AlertmanagerWebhook,
  submitter: Submitter,
  signal?: AbortSignal,
): Promise<AlertmanagerIntakeResponse> {
  const { mode } = deps.settings.alertmanager;
  const created: Created[] = [];
  const skipped: Skipped[] = [];
  if (mode === "per_group") await ingestGroup(deps, hook, submitter, created, skipped);
  else await ingestAlerts(deps, hook, submitter, created, skipped, signal);
  return {
    mode,
    group_key: hook.groupKey,
    sessions_created: created,
    alerts_skipped: skipped,
    truncated_alerts: hook.truncatedAlerts,
  };
}

async function ingestAlerts(
  deps: IngestResources,
  hook: AlertmanagerWebhook,
  submitter: Submitter,
  created: Created[],
  skipped: Skipped[],
  signal?: AbortSignal,
): Promise<void> {
  const seen = new Map<string, string | null>();
  for (const [index, alert] of hook.alerts.entries()) {
    if (signal?.aborted) {
      deps.logger.warn(
        { group_key: hook.groupKey, processed: index, total: hook.alerts.length },
        "client went away; the rest of the notification is left for Alertmanager's retry",
      );
      return;
    }
    const fp = alert.fingerprint;
    if (alert.status === "resolved") {
      const sessionId = await recordResolved(deps, { alertFingerprint: fp }, alert);
      skipped.push({
        fingerprint: fp,
        status: "resolved",
        reason: "resolved",
        session_id: sessionId,
      });
      continue;
    }
    if (seen.has(fp)) {
      skipped.push({
        fingerprint: fp,
        status: "firing",
        reason: "duplicate",
        session_id: seen.get(fp) ?? null,
      });
      continue;
    }
    const placement = submitter.place(alert.labels);
    if (placement.refused) {
      refuse(deps, hook, [fp], placement, skipped);
      continue;
    }
    const alertType = alertTypeOf(deps, alert.labels);
    const outcome = await createUnlessDuplicate(
      deps,
      `am:fp:${fp}`,
      { alertFingerprint: fp },
      alertType,
      (tx) =>
        createSession(tx, {
          alertData: maskAlertData(deps, renderAlertData(hook, [alert])).data,
          alertType,
          chainId: chainIdOf(deps, alertType),
          author: submitter.author,
          project: placement.project,
          runbookUrl: runbookOf(deps, alert),
          alertFingerprint: fp,
          alertGroupKey: hook.groupKey || null,
          alertLabels: alert.labels,
          slackMessageFingerprint: slackFingerprintOf(deps, alert.labels, alert.annotations),
        }),
    );
    if ("pendingLimit" in outcome) {
      skipped.push({
        fingerprint: fp,
        status: "firing",
        reason: "pending_limit",
        session_id: null,
      });
      continue;
    }
    if ("duplicateOf" in outcome) {
      seen.set(fp, outcome.duplicateOf);
      skipped.push({
        fingerprint: fp,
        status: "firing",
        reason: "duplicate",
        session_id: outcome.duplicateOf,
      });
      continue;
    }
    seen.set(fp, outcome.session.id);
    created.push({
      session_id: outcome.session.id,
      alert_type: alertType,
      fingerprints: [fp],
      project: placement.project,
    });
  }
}

async function ingestGroup(
  deps: IngestResources,
  hook: AlertmanagerWebhook,
  submitter: Submitter,
  created: Created[],
  skipped: Skipped[],
): Promise<void> {
  const groupKey = hook.groupKey || JSON.stringify(hook.groupLabels);
  const firing = hook.alerts.filter((a) => a.status === "firing");
  const resolved = hook.alerts.filter((a) => a.status === "resolved");
  let groupSession: string | null = null;
  if (firing.length === 0) {
    groupSession = await recordResolved(deps, { alertGroupKey: groupKey }, resolved[0]);
  }
  for (const alert of resolved) {
    skipped.push({
      fingerprint: alert.fingerprint,
      status: "resolved",
      reason: "resolved",
      session_id: groupSession,
    });
  }
  if (firing.length === 0) return;
  const first = firing[0] as AlertmanagerAlert;
  const labels = { ...first.labels, ...hook.commonLabels, ...hook.groupLabels };
  const alertType = alertTypeOf(deps, labels);
  const fingerprints = firing.map((a) => a.fingerprint);
  const placement = submitter.place(labels);
  if (placement.refused) {
    refuse(deps, hook, fingerprints, placement, skipped);
    return;
  }
  const outcome = await createUnlessDuplicate(
    deps,
    `am:group:${groupKey}`,
    { alertGroupKey: groupKey },
    alertType,
    (tx) =>
      createSession(tx, {
        alertData: maskAlertData(deps, renderAlertData(hook, firing)).data,
        alertType,
        chainId: chainIdOf(deps, alertType),
        author: submitter.author,
        project: placement.project,
        runbookUrl: firing.map((a) => runbookOf(deps, a)).find((url) => url !== null) ?? null,
        alertFingerprint: firing.length === 1 ? first.fingerprint : null,
        alertGroupKey: groupKey,
        alertLabels: hook.commonLabels,
        slackMessageFingerprint: slackFingerprintOf(deps, labels, first.annotations),
      }),
  );
  if ("pendingLimit" in outcome) {
    for (const fp of fingerprints) {
      skipped.push({
        fingerprint: fp,
        status: "firing",
        reason: "pending_limit",
        session_id: null,
      });
    }
    return;
  }
  if ("duplicateOf" in outcome) {
    for (const fp of fingerprints) {
      skipped.push({
        fingerprint: fp,
        status: "firing",
        reason: "group_duplicate",
        session_id: outcome.duplicateOf,
      });
    }
    return;
  }
  created.push({
    session_id: outcome.session.id,
    alert_type: alertType,
    fingerprints,
    project: placement.project,
  });
}

/** Alerts whose project is unknown or not the receiver's to create in: reported and logged. */
function refuse(
  deps: IngestResources,
  hook: AlertmanagerWebhook,
  fingerprints: string[],
  placement: Placement & { refused: string },
  skipped: Skipped[],
): void {
  deps.logger.warn(
    {
      group_key: hook.groupKey,
      fingerprints,
      project: placement.project,
      reason: placement.refused,
    },
    "alert not stored: its project is unknown or not the receiver's",
  );
  for (const fp of fingerprints) {
    skipped.push({
      fingerprint: fp,
      status: "firing",
      reason: placement.refused,
      session_id: null,
      project: placement.project,
    });
  }
}

/**
 * Creates a session under an advisory lock unless a recent one matches or its alert type is
 * at the pending limit (checked after the dedupe, so a duplicate is reported as such); then
 * publishes it.
 */
async function createUnlessDuplicate(
  deps: IngestResources,
  lockKey: string,
  match: AlertMatch,
  alertType: string,
  create: (tx: Tx) => Promise<CreatedSession>,
): Promise<CreatedSession | { duplicateOf: string } | { pendingLimit: true }> {
  const cutoff = new Date(now(deps).getTime() - deps.settings.alertmanager.dedupeWindowMs);
  const outcome = await withAlertLock(deps.prisma, lockKey, async (tx) => {
    const duplicateOf = await findDuplicateAlertSession(tx, match, ACTIVE_SESSION_STATUSES, cutoff);
    if (duplicateOf) return { duplicateOf };
    if (await pendingLimitReached(deps, tx, alertType)) return { pendingLimit: true as const };
    return create(tx);
  });
  if ("duplicateOf" in outcome || "pendingLimit" in outcome) return outcome;
  await deliverSession(deps, outcome);
  return outcome;
}

/** Marks the newest matching session resolved (once). Returns its id, or null when none. */
function recordResolved(
  deps: IngestResources,
  match: AlertMatch,
  alert: AlertmanagerAlert | undefined,
): Promise<string | null> {
  return markAlertResolved(deps.prisma, match, resolvedAt(deps, alert));
}

function resolvedAt(deps: IngestResources, alert: AlertmanagerAlert | undefined): Date {
  const ends = alert?.endsAt ? new Date(alert.endsAt) : null;
  return ends && !Number.isNaN(ends.getTime()) && ends.getUTCFullYear() > 1 ? ends : now(deps);
}

const now = (deps: IngestResources): Date => (deps.clock ? deps.clock() : new Date());

/** The alert type label's value when a chain handles it, else the default alert type. */
function alertTypeOf(deps: IngestResources, labels: Record<string, string>): string {
  const value = labels[deps.settings.alertmanager.alertTypeLabel];
  if (value && findChainForAlertType(deps.config, value)) return value;
  return deps.config.defaults.alert_type;
}

function chainIdOf(deps: IngestResources, alertType: string): string {
  const chain = findChainForAlertType(deps.config, alertType);
  // alertTypeOf only returns handled types or the default, which config validation guarantees.
  if (!chain) throw new HttpError(500, "internal", `no chain handles alert type ${alertType}`);
  return chain.id;
}

/**
 * The runbook annotation (`runbook_url` unless configured otherwise) when it is a URL TARSy
 * may fetch (allowlisted host); else the session gets no URL and uses the default runbook.
 */
/**
 * The Slack thread fingerprint of an alert: the label named by `system.slack.fingerprint_label`,
 * else the annotation named by `fingerprint_annotation` (masked like the alert data).
 */
function slackFingerprintOf(
  deps: IngestResources,
  labels: Record<string, string>,
  annotations: Record<string, string>,
): string | null {
  const { fingerprint_label, fingerprint_annotation } = deps.config.system.slack;
  const value = (labels[fingerprint_label] || annotations[fingerprint_annotation] || "").trim();
  return value ? maskAlertData(deps, value).data : null;
}

function runbookOf(deps: IngestResources, alert: AlertmanagerAlert): string | null {
  const url = alert.annotations[deps.settings.alertmanager.runbookAnnotation];
  if (!url) return null;
  const problem = FetchableUrlSchema.safeParse(url).success
    ? deps.runbooks.problem(url)
    : "not a fetchable URL";
  if (!problem) return url;
  deps.logger.warn(
    { fingerprint: alert.fingerprint, runbook_url: url, reason: problem },
    "runbook annotation ignored",
  );
  return null;
}

/** The alert data the agents read: the alert(s) plus the notification's context. */
export function renderAlertData(hook: AlertmanagerWebhook, alerts: AlertmanagerAlert[]): string {
  const describe = (a: AlertmanagerAlert) => ({
    status: a.status,
    labels: a.labels,
    annotations: a.annotations,
    starts_at: a.startsAt,
    ...(a.endsAt && !a.endsAt.startsWith("0001-") ? { ends_at: a.endsAt } : {}),
    ...(a.generatorURL ? { generator_url: a.generatorURL } : {}),
    fingerprint: a.fingerprint,
  });
  const data = {
    source: "alertmanager",
    receiver: hook.receiver,
    group_key: hook.groupKey,
    group_labels: hook.groupLabels,
    common_labels: hook.commonLabels,
    common_annotations: hook.commonAnnotations,
    external_url: hook.externalURL,
    ...(alerts.length === 1
      ? { alert: describe(alerts[0] as AlertmanagerAlert) }
      : { alerts: alerts.map(describe) }),
    ...(hook.truncatedAlerts > 0
      ? {
          truncated_alerts: hook.truncatedAlerts,
          note: `Alertmanager left ${hook.truncatedAlerts} more alert(s) of this group out of the notification (max_alerts).`,
        }
      : {}),
  };
  return JSON.stringify(data, null, 2);
}
