import { Conversation } from "../conversation.ts";
import { buildExecutiveSummaryMessages, buildSynthesisMessages } from "../prompts/index.ts";
import type { ControllerResult, RunContext } from "../run-context.ts";
import { toolLessCall } from "./single-call.ts";

/** Synthesis of parallel investigations: one tool-less call whose answer is the final analysis. */
export async function runSynthesis(run: RunContext): Promise<ControllerResult> {
  const { exec } = run;
  const conversation = new Conversation(run.store, {
    sessionId: exec.sessionId,
    stageId: exec.stageId,
    executionId: exec.executionId,
  });
  for (const message of buildSynthesisMessages(exec)) conversation.append(message);
  const text = await toolLessCall(run, conversation, {
    interactionType: "synthesis",
    eventType: "final_analysis",
    iteration: 1,
  });
  return { finalAnalysis: text };
}

/**
 * The session's executive summary: one tool-less call over the final analysis, shown as a
 * session-level `executive_summary` event (no stage, no execution).
 */
export async function runExecutiveSummary(run: RunContext): Promise<ControllerResult> {
  const { exec } = run;
  const conversation = new Conversation(run.store, {
    sessionId: exec.sessionId,
    stageId: exec.stageId,
    executionId: exec.executionId,
  });
  for (const message of buildExecutiveSummaryMessages(exec.previousContext ?? "")) {
    conversation.append(message);
  }
  const text = await toolLessCall(run, conversation, {
    interactionType: "executive_summary",
    eventType: "executive_summary",
    eventScope: { sessionId: exec.sessionId, stageId: null, executionId: null },
    iteration: 1,
  });
  return { finalAnalysis: text };
}
