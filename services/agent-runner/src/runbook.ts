import type { TarsyConfig } from "@tarsy/config";
import type { MaskingService } from "@tarsy/masking";
import type { Logger } from "@tarsy/runtime";
import { abortReasonOf } from "./errors.ts";
import type {
  ExecutionRecord,
  RunbookFetcher,
  RunnerStore,
  SessionRunbookRecord,
} from "./ports.ts";
import type { Timeline } from "./timeline.ts";

/**
 * The session's runbook: resolved by the first execution that needs it and stored on the
 * session, so every later execution, replica and redelivery (on any runner) uses the same
 * text. Fetching is fail-open: `defaults.runbook` with a timeline note saying why.
 */

export interface RunbookDeps {
  config: TarsyConfig;
  store: RunnerStore;
  runbooks: RunbookFetcher;
  /** Runbook text is masked like alert data (`defaults.alert_masking`). */
  masking: Pick<MaskingService, "maskAlertData">;
  logger: Logger;
}

function masked(deps: RunbookDeps, text: string): string | null {
  const trimmed = text.trim();
  if (!trimmed) return null;
  const settings = deps.config.defaults.alert_masking;
  const result = deps.masking.maskAlertData(trimmed, {
    enabled: settings.enabled,
    pattern_group: settings.pattern_group,
  });
  if (result.failed) deps.logger.warn("runbook masking failed; the runbook is used unmasked");
  return result.content;
}

function fallback(deps: RunbookDeps, error: string | null): SessionRunbookRecord {
  const content = masked(deps, deps.config.defaults.runbook);
  return { content, source: content === null ? "none" : "default", error };
}

async function resolve(
  deps: RunbookDeps,
  url: string | null,
  signal: AbortSignal,
): Promise<SessionRunbookRecord> {
  if (!url) return fallback(deps, null);
  try {
    const text = await deps.runbooks.fetch(url, signal);
    return { content: masked(deps, text), source: "fetched", error: null };
  } catch (err) {
    // A cancelled or timed-out execution stores nothing; the next one resolves it.
    const aborted = abortReasonOf(signal);
    if (aborted) throw aborted;
    const reason = err instanceof Error ? err.message : String(err);
    deps.logger.warn({ err, runbook_url: url }, "runbook not fetched; falling back");
    return fallback(deps, reason);
  }
}

function fallbackNote(url: string, runbook: SessionRunbookRecord): string {
  const instead =
    runbook.source === "default"
      ? "the default runbook (defaults.runbook) is used instead"
      : "no default runbook is configured, so the agents work without one";
  return `Runbook ${url} could not be fetched (${runbook.error}); ${instead}.`;
}

export async function sessionRunbook(
  deps: RunbookDeps,
  record: ExecutionRecord,
  timeline: Timeline,
  signal: AbortSignal,
): Promise<SessionRunbookRecord> {
  const stored = record.session.runbook;
  if (stored) return stored;
  const url = record.session.runbookUrl;
  const resolved = await resolve(deps, url, signal);
  const { runbook, claimed } = await deps.store.claimSessionRunbook(record.sessionId, resolved);
  // Only the execution whose text was stored tells the user why it fell back.
  if (claimed && runbook.error && url) {
    await timeline.create("error", {
      status: "completed",
      content: fallbackNote(url, runbook),
      metadata: {
        kind: "runbook_fallback",
        runbook_url: url,
        runbook_source: runbook.source,
        reason: runbook.error,
      },
    });
  }
  return runbook;
}
