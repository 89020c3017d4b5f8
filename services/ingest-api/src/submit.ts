import { type CreatedSession, withdrawUnpublishedSession } from "@tarsy/db";
import { deliverEntry } from "./delivery.ts";
import type { IngestResources } from "./deps.ts";
import { unavailable } from "./errors.ts";

/** Alert data as stored: masked with `defaults.alert_masking` (fail-open: on error, as given). */
export function maskAlertData(
  deps: Pick<IngestResources, "config" | "masking" | "logger">,
  text: string,
) {
  const settings = deps.config.defaults.alert_masking;
  const result = deps.masking.maskAlertData(text, {
    enabled: settings.enabled,
    pattern_group: settings.pattern_group,
  });
  if (result.failed) deps.logger.warn("alert masking failed; storing the alert data unmasked");
  return { data: result.content, redactions: result.redactions };
}

/**
 * Publishes a just-committed session's `sessionSubmitted`. If it cannot be published the
 * session is withdrawn and the request fails with 503, unless the background relay got the
 * message out meanwhile (then the session stands and this returns normally).
 */
export async function deliverSession(
  deps: Pick<IngestResources, "bus" | "settings" | "prisma" | "logger">,
  created: CreatedSession,
): Promise<void> {
  const sessionId = created.session.id;
  try {
    await deliverEntry(deps, created.submitted);
  } catch (err) {
    const withdrawn = await withdrawUnpublishedSession(
      deps.prisma,
      sessionId,
      created.submitted.id,
    );
    if (!withdrawn) return;
    deps.logger.warn({ err, session_id: sessionId }, "submission not published; session withdrawn");
    throw unavailable(
      "the message bus is unavailable; the alert was not accepted, retry later",
      err,
    );
  }
}
