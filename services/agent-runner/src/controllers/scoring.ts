/**
 * The scoring judge (#21): turn 1 assesses the investigation and ends with the score (bounded
 * reminders when the number is missing); the outcome verdict caps it; the analysis is scanned
 * for the failure vocabulary; turn 2 writes the tool improvement report. The result goes to
 * the run's `session_scores` row; the orchestrator ends the run when the execution finishes.
 */
import { FAILURE_TAGS, type FailureTag } from "@tarsy/contracts";
import { Conversation } from "../conversation.ts";
import { reflect } from "../memory.ts";
import { alertSection, runbookSection } from "../prompts/context.ts";
import {
  INVESTIGATION_END,
  INVESTIGATION_START,
  OUTCOME_BANDS,
  type Outcome,
  SCORE_REMINDER,
  SCORING_PROMPT_HASH,
  SCORING_SYSTEM_PROMPT,
  scoringUserPrompt,
  TOOL_IMPROVEMENT_PROMPT,
} from "../prompts/scoring.ts";
import type { ControllerResult, RunContext } from "../run-context.ts";
import { toolLessCall } from "./single-call.ts";

/** The end of the investigation (its conclusion) finds the memories the reflector is shown. */
const REFLECTOR_QUERY_CHARS = 4000;

/** How many times the judge is reminded to give the score before the run fails. */
export const MAX_SCORE_REMINDERS = 2;

export class NoScoreError extends Error {
  readonly code = "no_score" as const;
  constructor() {
    super(`the judge gave no score on its last line after ${MAX_SCORE_REMINDERS} reminders`);
    this.name = "NoScoreError";
  }
}

const SCORE_LINE =
  /^[\s*_`#>-]*(?:(?:total\s+)?score\s*[:=]?\s*)?[*_`]*\s*(\d{1,3})\s*(?:\/\s*100)?\s*[*_`]*\s*\.?\s*$/i;

/** The score on the answer's last non-empty line (0–100), and the text above it. */
export function extractScore(text: string): { score: number; analysis: string } | null {
  const lines = text.trimEnd().split("\n");
  const last = lines.at(-1) ?? "";
  const match = SCORE_LINE.exec(last);
  if (!match?.[1]) return null;
  const score = Number(match[1]);
  if (score > 100) return null;
  return { score, analysis: lines.slice(0, -1).join("\n").trim() };
}

const OUTCOME_LINE =
  /^[\s*_#>-]*outcome[*_]*\s*:\s*[*_`]*\s*(correct|partial(?:ly correct)?|wrong)\b/gim;

/** The judge's last `Outcome:` verdict, if it gave one. */
export function parseOutcome(analysis: string): Outcome | null {
  const verdicts = [...analysis.matchAll(OUTCOME_LINE)];
  const word = verdicts.at(-1)?.[1]?.toLowerCase();
  if (!word) return null;
  return word.startsWith("partial") ? "partial" : (word as Outcome);
}

/** The outcome caps the score: a score outside its verdict's band moves to the band's edge. */
export function capScore(score: number, outcome: Outcome | null): number {
  if (!outcome) return score;
  const band = OUTCOME_BANDS[outcome];
  return Math.min(band.max, Math.max(band.min, score));
}

/** The vocabulary's terms the analysis uses, in the vocabulary's order. */
export function scanFailureTags(analysis: string): FailureTag[] {
  const text = analysis.toLowerCase();
  return FAILURE_TAGS.filter((tag) => text.includes(tag.term)).map((tag) => tag.term);
}

/** Data markers inside the investigation cannot end its section early. */
function fenceInvestigation(text: string): string {
  return text
    .replaceAll(INVESTIGATION_START, "<!-- investigation start (quoted) -->")
    .replaceAll(INVESTIGATION_END, "<!-- investigation end (quoted) -->");
}

export async function runScoring(run: RunContext): Promise<ControllerResult> {
  const { exec } = run;
  if (!exec.stageId) throw new Error(`scoring execution ${exec.executionId} has no stage`);
  const conversation = new Conversation(run.store, {
    sessionId: exec.sessionId,
    stageId: exec.stageId,
    executionId: exec.executionId,
  });
  conversation.append({ role: "system", content: SCORING_SYSTEM_PROMPT });
  conversation.append({
    role: "user",
    content: scoringUserPrompt({
      alert: alertSection(exec.alertType, exec.alertData),
      runbook: runbookSection(exec.runbook),
      investigation: fenceInvestigation(exec.previousContext ?? ""),
    }),
  });
  let iteration = 1;
  const answer = await toolLessCall(run, conversation, {
    interactionType: "scoring",
    eventType: "llm_response",
    eventMetadata: { scoring_turn: "evaluation" },
    iteration,
  });
  let analysis = answer.trim();
  let parsed = extractScore(answer);
  for (let reminder = 1; !parsed && reminder <= MAX_SCORE_REMINDERS; reminder++) {
    conversation.append({ role: "user", content: SCORE_REMINDER });
    iteration++;
    const retry = await toolLessCall(run, conversation, {
      interactionType: "scoring",
      eventType: "llm_response",
      eventMetadata: { scoring_turn: "score_reminder", reminder },
      iteration,
    });
    parsed = extractScore(retry);
    if (parsed?.analysis) analysis = `${analysis}\n\n${parsed.analysis}`;
  }
  if (!parsed) throw new NoScoreError();
  if (parsed.analysis && iteration === 1) analysis = parsed.analysis;
  const totalScore = capScore(parsed.score, parseOutcome(analysis));
  const failureTags = scanFailureTags(analysis);

  conversation.append({ role: "user", content: TOOL_IMPROVEMENT_PROMPT });
  const report = await toolLessCall(run, conversation, {
    interactionType: "scoring",
    eventType: "llm_response",
    eventMetadata: { scoring_turn: "tool_improvement_report" },
    iteration: iteration + 1,
  });
  await run.store.recordScoreResult(exec.stageId, {
    totalScore,
    scoreAnalysis: analysis,
    toolImprovementReport: report.trim(),
    failureTags,
    promptHash: SCORING_PROMPT_HASH,
  });
  run.logger.info({ total_score: totalScore, failure_tags: failureTags }, "session scored");
  // Investigation memory: what the scored investigation teaches (fail-open).
  const investigation = exec.previousContext ?? "";
  await reflect(run, {
    investigation,
    finalAnalysis: investigation.slice(-REFLECTOR_QUERY_CHARS),
    score: totalScore,
    failureTags,
    scoreAnalysis: analysis,
    toolImprovementReport: report.trim(),
  });
  return { finalAnalysis: analysis };
}
