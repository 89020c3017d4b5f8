import { ForcedConclusionReasonSchema, forcedConclusionLabel } from "@tarsy/contracts";

/** What a completed stage hands to the next one. */
export interface StageResult {
  stageName: string;
  finalAnalysis: string;
  /** Why its agent was made to conclude (null or absent: it concluded by itself). */
  forcedConclusion?: string | null;
}

export const CHAIN_CONTEXT_START = "<!-- CHAIN_CONTEXT_START -->";
export const CHAIN_CONTEXT_END = "<!-- CHAIN_CONTEXT_END -->";

/**
 * The previous stages' final analyses, in order, each wrapped in the chain-context markers,
 * for the next stage's prompt. Empty when there is no previous stage.
 */
export function buildStageContext(stages: readonly StageResult[]): string {
  if (stages.length === 0) return "";
  return stages
    .map(
      (stage, i) =>
        `${CHAIN_CONTEXT_START}\n### Stage ${i + 1}: ${stage.stageName}${forcedNote(stage.forcedConclusion)}\n\n${stage.finalAnalysis.trim()}\n${CHAIN_CONTEXT_END}`,
    )
    .join("\n\n");
}

/** ` (forced conclusion — time budget)` after a heading whose analysis was forced; else "". */
export function forcedNote(reason: string | null | undefined): string {
  const parsed = ForcedConclusionReasonSchema.safeParse(reason);
  return parsed.success ? ` (forced conclusion — ${forcedConclusionLabel(parsed.data)})` : "";
}
