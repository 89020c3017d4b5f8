import { LlmClientError } from "@tarsy/llm-client";
import { secondsSince } from "@tarsy/metrics";
import {
  abortedEventStatus,
  abortReasonOf,
  type ExecutionAbortedError,
  IterationTimeoutError,
  LlmCallError,
  RunnerError,
} from "./errors.ts";
import {
  type AttemptOutcome,
  emptyResponse,
  type LlmCallOptions,
  type LlmResponse,
  type StreamedEvents,
  streamAttempt,
} from "./llm-attempt.ts";
import { llmFailureKind } from "./llm-failure.ts";
import { backoffDelay, pause } from "./llm-retry.ts";
import type { RunContext } from "./run-context.ts";

export type { CodeExecution, Grounding, LlmCallOptions, LlmResponse } from "./llm-attempt.ts";

function failureCode(error: Error): string {
  return error instanceof LlmClientError || error instanceof RunnerError ? error.code : "UNKNOWN";
}

/**
 * Streams one LLM call into the timeline and records it as one LLMInteraction (also when it
 * fails). A transport failure (llm-service unreachable or restarting, a cut or stalled
 * stream) is retried with backoff within the retry budget: the partial answer is discarded
 * (its streamed text is reset for live viewers) and only the answer that completes is kept.
 * Enforces the per-iteration timeout and the execution's abort signal.
 */
export async function callLlm(run: RunContext, options: LlmCallOptions): Promise<LlmResponse> {
  const policy = run.llmRetry;
  const started = performance.now();
  const budgetEnds = Date.now() + policy.budgetMs;
  const events: StreamedEvents = { thinking: null, text: null };
  let attempts = 0;
  let outcome: AttemptOutcome;
  let error: Error | null;
  for (;;) {
    attempts++;
    const attemptStarted = performance.now();
    outcome = await streamAttempt(run, options, events);
    error = outcome.error;
    if (!error || llmFailureKind(error) !== "transport") break;
    recordLlmMetrics(run, outcome.response, attemptStarted, "retried");
    const delay = backoffDelay(attempts, policy);
    if (Date.now() + delay > budgetEnds) {
      const seconds = Math.round((performance.now() - started) / 1000);
      error = new LlmCallError(
        `${error.message} (gave up after ${attempts} attempts in ${seconds} s)`,
        failureCode(error),
        attempts,
      );
      break;
    }
    run.logger.warn(
      { attempt: attempts, delay_ms: delay, code: failureCode(error), reason: error.message },
      "LLM call cut; retrying",
    );
    // The partial answer is void: live viewers drop its text, nothing of it is kept.
    for (const event of [events.thinking, events.text]) {
      if (event) run.timeline.reset(event);
    }
    outcome = { response: { ...emptyResponse(), textEvent: events.text }, error: null };
    if (!(await pause(delay, run.signal))) {
      error = abortReasonOf(run.signal) ?? error;
      break;
    }
  }
  if (error instanceof LlmClientError) {
    error = new LlmCallError(error.message, error.code, attempts);
  }
  const response = outcome.response;
  response.durationMs = Math.round(performance.now() - started);
  run.usage.add(response.usage);

  const aborted: ExecutionAbortedError | undefined = abortReasonOf(run.signal);
  recordLlmMetrics(run, response, started, requestStatus(error, aborted));
  await settleEvents(run, events, response, error, aborted);

  const interactionType =
    typeof options.interactionType === "function"
      ? options.interactionType(error ? null : response)
      : options.interactionType;
  const { exec } = run;
  const metadata = {
    ...((response.codeExecutions.length > 0 || response.groundings.length > 0) && {
      code_executions: response.codeExecutions,
      groundings: response.groundings,
    }),
    ...(attempts > 1 && { attempts }),
  };
  const interaction = {
    sessionId: exec.sessionId,
    stageId: options.textEventScope ? options.textEventScope.stageId : exec.stageId,
    executionId: exec.executionId,
    interactionType,
    modelName: exec.config.llm.model ?? "",
    provider: exec.config.providerName,
    iteration: options.iteration,
    lastMessageId: options.lastMessageId,
    llmRequest: {
      provider: exec.config.llm.provider,
      model: exec.config.llm.model ?? "",
      backend: exec.config.llm.backend ?? "langchain",
      tools: options.tools.map((t) => ({ name: t.name, description: t.description })),
      ...(options.lastMessageId === null && { messages: options.messages }),
    },
    responseText: response.text || null,
    thinkingContent: response.thinking || null,
    toolCalls: response.toolCalls.length > 0 ? response.toolCalls : null,
    responseMetadata: Object.keys(metadata).length > 0 ? metadata : null,
    usage: response.usage,
    durationMs: response.durationMs,
    errorMessage: error ? error.message : null,
  };
  run.writes.enqueue(() => run.store.recordLlmInteraction(interaction));

  if (error) throw error;
  return response;
}

/**
 * Ends the call's streaming events: failed (or as aborted) on error; on success the thinking
 * event completes and the text event stays open for the caller. An event a cut attempt
 * opened that the answer that completed left empty ends `cancelled`, marked superseded.
 */
async function settleEvents(
  run: RunContext,
  events: StreamedEvents,
  response: LlmResponse,
  error: Error | null,
  aborted: ExecutionAbortedError | undefined,
): Promise<void> {
  if (error) {
    const status = aborted ? abortedEventStatus(aborted) : "failed";
    for (const event of [events.thinking, events.text]) {
      if (event) await run.timeline.complete(event, { status });
    }
    return;
  }
  const superseded = { status: "cancelled", metadata: { superseded: true } } as const;
  if (events.thinking) {
    await run.timeline.complete(events.thinking, events.thinking.content ? {} : superseded);
  }
  if (events.text && response.text === "") {
    await run.timeline.complete(events.text, superseded);
    response.textEvent = null;
  }
}

/** Outcome label of one LLM request. */
function requestStatus(error: Error | null, aborted: ExecutionAbortedError | undefined): string {
  if (!error) return "ok";
  if (aborted) return "aborted";
  if (error instanceof IterationTimeoutError) return "timeout";
  return "error";
}

function recordLlmMetrics(
  run: RunContext,
  response: LlmResponse,
  startedAt: number,
  status: string,
): void {
  const { llm } = run.exec.config;
  const labels = { provider: llm.provider, model: llm.model ?? "" };
  const { llmRequests, llmRequestDuration, llmTokens } = run.metrics;
  llmRequests.inc({ ...labels, status });
  llmRequestDuration.observe(labels, secondsSince(startedAt));
  const usage = response.usage;
  if (!usage) return;
  llmTokens.inc({ ...labels, kind: "input" }, usage.input_tokens);
  llmTokens.inc({ ...labels, kind: "output" }, usage.output_tokens);
  llmTokens.inc({ ...labels, kind: "thinking" }, usage.thinking_tokens ?? 0);
}
