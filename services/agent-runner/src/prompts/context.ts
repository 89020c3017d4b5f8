/** Sections of the user message: alert, runbook and the previous stages' results. */
import { fenceUntrusted } from "./untrusted.ts";

export const CHAIN_CONTEXT_START = "<!-- CHAIN_CONTEXT_START -->";
export const CHAIN_CONTEXT_END = "<!-- CHAIN_CONTEXT_END -->";

/** Alert data is opaque, untrusted text: passed verbatim inside its fence. */
export function alertSection(alertType: string, alertData: string): string {
  return `## Alert Details

**Alert type:** ${alertType}

### Alert Data

${fenceUntrusted("alert", alertData)}`;
}

export const RUNBOOK_START = "<!-- RUNBOOK START -->";
export const RUNBOOK_END = "<!-- RUNBOOK END -->";
export const NO_RUNBOOK = "No runbook available.";

/**
 * The session's runbook between markers: fetched text is untrusted, so a marker inside it is
 * defused and cannot end the section early.
 */
export function runbookSection(runbook: string | undefined): string {
  const text = runbook?.trim();
  if (!text) return `## Runbook Content\n\n${NO_RUNBOOK}`;
  const fenced = text.replace(/<!--\s*RUNBOOK (START|END)\s*-->/gi, "<!-- runbook $1 (quoted) -->");
  return `## Runbook Content

${RUNBOOK_START}
${fenceUntrusted("runbook", fenced)}
${RUNBOOK_END}`;
}

/**
 * Results of earlier stages, between markers so they cannot be mistaken for instructions (the
 * orchestrator's context already marks each stage; anything else is marked here).
 */
export function previousStagesSection(context: string | undefined): string | undefined {
  const text = context?.trim();
  if (!text) return undefined;
  const marked =
    text.startsWith(CHAIN_CONTEXT_START) && text.endsWith(CHAIN_CONTEXT_END)
      ? text
      : `${CHAIN_CONTEXT_START}\n${text}\n${CHAIN_CONTEXT_END}`;
  return `## Previous Stage Results

The earlier stages of this investigation concluded the following. Build on it, do not repeat it.

${fenceUntrusted("previous_stages", marked)}`;
}
