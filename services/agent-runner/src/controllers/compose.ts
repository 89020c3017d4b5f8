import { Conversation } from "../conversation.ts";
import { buildComposeMessages } from "../prompts/index.ts";
import type { ControllerResult, RunContext } from "../run-context.ts";
import { toolLessCall } from "./single-call.ts";

/** The model answered with no text: the compose stage fails (the orchestrator concatenates). */
export class EmptyComposeError extends Error {
  readonly code = "empty_compose" as const;
  constructor() {
    super("the compose call answered with no text");
    this.name = "EmptyComposeError";
  }
}

/**
 * The compose stage (the amended report): one tool-less call over the upstream report and the
 * action memo, streamed as the stage's `final_analysis`. Its answer is the session's final
 * analysis; when it fails (after the usual retries and provider fallback) the orchestrator
 * puts the two documents together instead.
 */
export async function runCompose(run: RunContext): Promise<ControllerResult> {
  const { exec } = run;
  const conversation = new Conversation(run.store, {
    sessionId: exec.sessionId,
    stageId: exec.stageId,
    executionId: exec.executionId,
  });
  for (const message of buildComposeMessages(exec)) conversation.append(message);
  const text = await toolLessCall(run, conversation, {
    interactionType: "composition",
    eventType: "final_analysis",
    iteration: 1,
  });
  if (!text.trim()) throw new EmptyComposeError();
  return { finalAnalysis: text };
}
