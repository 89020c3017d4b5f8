import { Conversation } from "../conversation.ts";
import { abortReasonOf } from "../errors.ts";
import { parseLabelsLine } from "../labels.ts";
import {
  buildExecutiveSummaryMessages,
  buildSynthesisMessages,
  labelsReminder,
} from "../prompts/index.ts";
import type { ControllerResult, RunContext } from "../run-context.ts";
import { ConsecutiveTimeoutsError, heldToolLessCall, toolLessCall } from "./single-call.ts";

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
 * session-level `executive_summary` event (no stage, no execution). Its last line may carry
 * the session's labels (`LABELS: …`, from the chain's label map): a readable line is stripped
 * from the summary and its event; an unreadable one gets one reminder, then fails open (the
 * first summary as written, labels null, counted in the parse-failure metric).
 */
export async function runExecutiveSummary(run: RunContext): Promise<ControllerResult> {
  const { exec } = run;
  const conversation = new Conversation(run.store, {
    sessionId: exec.sessionId,
    stageId: exec.stageId,
    executionId: exec.executionId,
  });
  const map = exec.labelMap?.map;
  for (const message of buildExecutiveSummaryMessages(exec.previousContext ?? "", map)) {
    conversation.append(message);
  }
  const options = {
    interactionType: "executive_summary" as const,
    eventType: "executive_summary" as const,
    eventScope: { sessionId: exec.sessionId, stageId: null, executionId: null },
  };
  const first = await heldToolLessCall(run, conversation, { ...options, iteration: 1 });
  if (!map) {
    await run.timeline.complete(first.event);
    return { finalAnalysis: first.text };
  }
  const parsed = parseLabelsLine(first.text, map);
  if (parsed.kind !== "invalid") {
    await run.timeline.complete(first.event, { content: parsed.text });
    return { finalAnalysis: parsed.text, labels: parsed.labels };
  }

  // One reminder on the same conversation; the first answer's event stays open meanwhile.
  const badLine = first.text.trimEnd().split("\n").at(-1)?.trim() ?? "";
  conversation.append({ role: "user", content: labelsReminder(badLine, parsed.reason, map) });
  let retry: Awaited<ReturnType<typeof heldToolLessCall>> | undefined;
  try {
    retry = await heldToolLessCall(run, conversation, { ...options, iteration: 2 });
  } catch (err) {
    const aborted = abortReasonOf(run.signal);
    if (aborted || err instanceof ConsecutiveTimeoutsError) {
      await run.timeline.complete(first.event, { eventType: "llm_response" });
      throw aborted ?? err;
    }
    run.logger.warn({ err }, "labels reminder failed; the summary keeps its LABELS line");
  }
  const second = retry ? parseLabelsLine(retry.text, map) : undefined;
  if (retry && second && second.kind !== "invalid" && second.text.trim()) {
    // The corrected answer is the summary; the first one remains an LLM response.
    await run.timeline.complete(first.event, { eventType: "llm_response" });
    await run.timeline.complete(retry.event, { content: second.text });
    return { finalAnalysis: second.text, labels: second.labels };
  }
  // Fail open: the first summary as written, no labels.
  const reason = second?.kind === "invalid" ? second.reason : parsed.reason;
  run.metrics.sessionLabelsParseFailures.inc({ label_map: exec.labelMap?.name ?? "" });
  run.logger.warn(
    { label_map: exec.labelMap?.name, reason },
    "executive summary LABELS line unreadable after a reminder; labels left unset",
  );
  if (retry) await run.timeline.complete(retry.event, { eventType: "llm_response" });
  await run.timeline.complete(first.event);
  return { finalAnalysis: first.text, labels: null };
}
