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
  requestLlmConfig,
  type StreamedEvents,
  streamAttempt,
} from "./llm-attempt.ts";
import { llmFailureKind } from "./llm-failure.ts";
import { type FallbackSwitch, fallbackTrigger } from "./llm-fallback.ts";
import { backoffDelay, pause } from "./llm-retry.ts";
import type { RunContext } from "./run-context.ts";

export type { CodeExecution, Grounding, LlmCallOptions, LlmResponse } from "./llm-attempt.ts";

function failureCode(error: Error): string {
  return error instanceof LlmClientError || error instanceof RunnerError ? error.code : "unknown";
}

/** What to do after a failed attempt. */
type NextStep = "fallback" | "retry" | "fail";

/**
 * Decides how a failed attempt goes on. A provider that failed too often in a row (or in a
 * way no retry fixes) is replaced by the next fallback provider at once. Otherwise transport
 * failures (llm-service unreachable or restarting, a cut, stalled or silent stream) are
 * retried within the retry budget, and a provider's own error once more on the same provider.
 */
async function nextStep(run: RunContext, error: Error, receivedOutput: boolean): Promise<NextStep> {
  const kind = llmFailureKind(error);
  if (kind === "aborted") return "fail";
  const trigger = fallbackTrigger(error, receivedOutput);
  const exhausted = trigger !== null && run.fallback.recordFailure(trigger);
  if (exhausted && trigger) {
    const change = run.fallback.switchProvider(trigger);
    if (change) {
      if (run.fallback.local) {
        run.logger.warn(
          {
            from_provider: change.from.providerName,
            to_provider: change.to.providerName,
            trigger: change.trigger,
            reason: error.message,
          },
          "summarization falling back to the next LLM provider",
        );
      } else {
        await recordFallback(run, change, error);
      }
      return "fallback";
    }
  }
  if (kind === "transport") return "retry";
  return exhausted ? "fail" : "retry";
}

/**
 * Makes a provider switch visible: a `provider_fallback` timeline event, the execution's
 * provider (with the original kept), the fallback counter and a log line.
 */
async function recordFallback(run: RunContext, change: FallbackSwitch, error: Error) {
  const { from, to } = change;
  const toBackend = to.llm.backend ?? "";
  run.logger.warn(
    {
      from_provider: from.providerName,
      from_backend: from.backend,
      to_provider: to.providerName,
      to_backend: toBackend,
      trigger: change.trigger,
      reason: error.message,
      ...(change.skippedIncompatible.length > 0 && {
        skipped_incompatible: change.skippedIncompatible,
      }),
    },
    "falling back to the next LLM provider",
  );
  run.metrics.llmFallbacks.inc({
    from_provider: from.providerName,
    to_provider: to.providerName,
    trigger: change.trigger,
  });
  await run.timeline.create("provider_fallback", {
    status: "completed",
    content: `Provider fallback: ${from.providerName} → ${to.providerName}`,
    metadata: {
      original_provider: from.providerName,
      original_backend: from.backend,
      fallback_provider: to.providerName,
      fallback_backend: toBackend,
      reason: error.message,
      trigger: change.trigger,
      attempt: change.attempt,
      ...(change.skippedIncompatible.length > 0 && {
        skipped_incompatible: change.skippedIncompatible,
      }),
    },
  });
  const { original } = run.fallback;
  await run.store.recordProviderFallback(run.exec.executionId, {
    originalProvider: original.providerName,
    originalBackend: original.backend,
    originalReasoningEffort: original.reasoningEffort ?? null,
    provider: to.providerName,
    backend: toBackend,
    reasoningEffort: to.llm.reasoningEffort ?? null,
  });
}

/**
 * Streams one LLM call into the timeline and records it as one LLMInteraction (also when it
 * fails). A failed attempt is retried (see `nextStep`) or handed to the next fallback
 * provider: the partial answer is discarded (its streamed text is reset for live viewers) and
 * only the answer that completes is kept. Enforces the per-iteration timeout and the
 * execution's abort signal.
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
    if (!error) {
      run.fallback.recordSuccess();
      break;
    }
    // The attempt's provider, before a fallback replaces it.
    const attemptLlm = run.exec.config.llm;
    const step = await nextStep(run, error, outcome.receivedOutput);
    if (step === "fail") break;
    const status = step === "retry" ? "retried" : "error";
    recordLlmMetrics(run, outcome.response, attemptStarted, status, attemptLlm);
    const delay = step === "fallback" ? 0 : backoffDelay(attempts, policy);
    if (step === "retry" && Date.now() + delay > budgetEnds) {
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
      step === "fallback"
        ? "LLM call failed; switched provider"
        : llmFailureKind(error) === "transport"
          ? "LLM call cut; retrying"
          : "LLM provider error; retrying once on the same provider",
    );
    // The partial answer is void: live viewers drop its text, nothing of it is kept.
    for (const event of [events.thinking, events.text]) {
      if (event) run.timeline.reset(event);
    }
    outcome = {
      response: { ...emptyResponse(), textEvent: events.text },
      error: null,
      receivedOutput: false,
    };
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
  const sent = requestLlmConfig(exec.config.llm, options);
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
      ...(sent.nativeTools && { native_tools: sent.nativeTools }),
      ...(options.lastMessageId === null && { messages: options.messages }),
    },
    responseText: response.text || null,
    thinkingContent: response.thinking || null,
    toolCalls: response.toolCalls.length > 0 ? response.toolCalls : null,
    responseMetadata: Object.keys(metadata).length > 0 ? metadata : null,
    usage: response.usage,
    reasoningEffort: exec.config.llm.reasoningEffort ?? null,
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
  llm = run.exec.config.llm,
): void {
  const labels = { provider: llm.provider, model: llm.model ?? "" };
  const { llmRequests, llmRequestDuration, llmTokens } = run.metrics;
  llmRequests.inc({ ...labels, status });
  llmRequestDuration.observe(labels, secondsSince(startedAt));
  const usage = response.usage;
  if (!usage) return;
  llmTokens.inc({ ...labels, kind: "input" }, usage.input_tokens);
  llmTokens.inc({ ...labels, kind: "output" }, usage.output_tokens);
  llmTokens.inc({ ...labels, kind: "thinking" }, usage.thinking_tokens ?? 0);
  llmTokens.inc({ ...labels, kind: "cache_read" }, usage.cache_read_tokens ?? 0);
  llmTokens.inc({ ...labels, kind: "cache_creation" }, usage.cache_creation_tokens ?? 0);
}
