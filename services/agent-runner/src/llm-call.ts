import type { LLMInteractionType, TimelineEventType, TokenUsage } from "@tarsy/contracts";
import {
  type ConversationMessage,
  createContinuityCollector,
  LlmClientError,
  type ReasoningContinuity,
  type ToolCall,
} from "@tarsy/llm-client";
import { secondsSince } from "@tarsy/metrics";
import {
  abortedEventStatus,
  abortReasonOf,
  type ExecutionAbortedError,
  IterationTimeoutError,
  LlmCallError,
  LlmProviderError,
} from "./errors.ts";
import type { ToolDefinition } from "./ports.ts";
import type { RunContext } from "./run-context.ts";
import type { LiveEvent, TimelineScope } from "./timeline.ts";

export interface CodeExecution {
  code: string;
  result: string;
}

export interface Grounding {
  webSearchQueries: string[];
  sources: { uri: string; title: string }[];
  urlContextUrls: string[];
}

/** One LLM call, aggregated. The text event is still open: the caller decides how it ends. */
export interface LlmResponse {
  text: string;
  thinking: string;
  toolCalls: ToolCall[];
  codeExecutions: CodeExecution[];
  groundings: Grounding[];
  /** Opaque reasoning-continuity data, for the assistant message only (never displayed). */
  continuity: ReasoningContinuity | undefined;
  usage: TokenUsage | null;
  textEvent: LiveEvent | null;
  durationMs: number;
}

export interface LlmCallOptions {
  messages: readonly ConversationMessage[];
  tools: readonly ToolDefinition[];
  /** Chooses the interaction type once the response is known. */
  interactionType: LLMInteractionType | ((response: LlmResponse | null) => LLMInteractionType);
  iteration: number | null;
  /** Timeline type of the streamed text. */
  textEventType: TimelineEventType;
  textEventMetadata?: Record<string, unknown>;
  /** Where the text event goes (session-level events have no stage/execution). */
  textEventScope?: TimelineScope;
  /** Stream thinking as `llm_thinking` events (off for summarization). */
  streamThinking?: boolean;
  /** End of the stored conversation this request is; null keeps the request inline. */
  lastMessageId: string | null;
}

function toUsage(chunk: {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  thinkingTokens: number;
}): TokenUsage {
  return {
    input_tokens: chunk.inputTokens,
    output_tokens: chunk.outputTokens,
    total_tokens: chunk.totalTokens,
    thinking_tokens: chunk.thinkingTokens,
  };
}

function groundingEventType(g: Grounding): TimelineEventType | null {
  if (g.webSearchQueries.length > 0 || g.sources.length > 0) return "google_search_result";
  if (g.urlContextUrls.length > 0) return "url_context_result";
  return null;
}

function groundingContent(g: Grounding): string {
  const lines: string[] = [];
  if (g.webSearchQueries.length > 0) lines.push(`Searched: ${g.webSearchQueries.join("; ")}`);
  for (const s of g.sources) lines.push(`- ${s.title || s.uri}: ${s.uri}`);
  for (const url of g.urlContextUrls) lines.push(`- ${url}`);
  return lines.join("\n");
}

/**
 * Streams one LLM call into the timeline: thinking and text become streaming events whose
 * deltas are published as stream chunks; code executions and grounding become their own
 * events; the call is recorded as an LLMInteraction (also when it fails). Enforces the
 * per-iteration timeout and the execution's abort signal, closing open events accordingly.
 */
export async function callLlm(run: RunContext, options: LlmCallOptions): Promise<LlmResponse> {
  const { exec } = run;
  const timeoutMs = exec.config.iterationTimeoutMs;
  const timer = new AbortController();
  const timeout = setTimeout(() => timer.abort(), timeoutMs);
  const signal = AbortSignal.any([run.signal, timer.signal]);
  const started = performance.now();
  const response: LlmResponse = {
    text: "",
    thinking: "",
    toolCalls: [],
    codeExecutions: [],
    groundings: [],
    continuity: undefined,
    usage: null,
    textEvent: null,
    durationMs: 0,
  };
  const continuity = createContinuityCollector();
  let thinkingEvent: LiveEvent | null = null;
  let providerError: { message: string; code: string } | null = null;
  let failure: Error | null = null;

  try {
    const stream = run.llm.generate(
      {
        sessionId: exec.sessionId,
        executionId: exec.executionId,
        agentName: exec.agentName,
        messages: [...options.messages],
        tools: options.tools.map((t) => ({
          name: t.name,
          description: t.description,
          parameters: t.inputSchema,
        })),
        config: exec.config.llm,
      },
      { signal },
    );
    for await (const chunk of stream) {
      continuity.add(chunk);
      switch (chunk.type) {
        case "thinking":
          response.thinking += chunk.content;
          if (options.streamThinking !== false) {
            thinkingEvent ??= await run.timeline.create("llm_thinking", {
              metadata: { source: "native" },
            });
            run.timeline.delta(thinkingEvent, chunk.content);
          }
          break;
        case "text":
          if (!chunk.content) break; // a bare thought signature
          response.text += chunk.content;
          response.textEvent ??= await run.timeline.create(options.textEventType, {
            metadata: options.textEventMetadata ?? null,
            ...(options.textEventScope && { scope: options.textEventScope }),
          });
          run.timeline.delta(response.textEvent, chunk.content);
          break;
        case "tool_call":
          response.toolCalls.push({
            id: chunk.callId,
            name: chunk.name,
            arguments: chunk.arguments,
          });
          break;
        case "code_execution":
          response.codeExecutions.push({ code: chunk.code, result: chunk.result });
          await run.timeline.create("code_execution", {
            status: "completed",
            content: `\`\`\`python\n${chunk.code}\n\`\`\`\n\nResult:\n${chunk.result}`,
            metadata: { code: chunk.code, result: chunk.result },
          });
          break;
        case "grounding": {
          const grounding: Grounding = {
            webSearchQueries: chunk.webSearchQueries,
            sources: chunk.sources,
            urlContextUrls: chunk.urlContextUrls,
          };
          response.groundings.push(grounding);
          const type = groundingEventType(grounding);
          if (type) {
            await run.timeline.create(type, {
              status: "completed",
              content: groundingContent(grounding),
              metadata: {
                queries: grounding.webSearchQueries,
                sources: grounding.sources,
                urls: grounding.urlContextUrls,
              },
            });
          }
          break;
        }
        case "usage":
          response.usage = toUsage(chunk);
          break;
        case "error":
          providerError = { message: chunk.message, code: chunk.code };
          break;
      }
    }
  } catch (err) {
    failure = err instanceof Error ? err : new Error(String(err));
  } finally {
    clearTimeout(timeout);
  }
  response.continuity = continuity.result();
  response.durationMs = Math.round(performance.now() - started);
  run.usage.add(response.usage);

  const aborted: ExecutionAbortedError | undefined = abortReasonOf(run.signal);
  let error: Error | null = null;
  if (aborted) error = aborted;
  else if (timer.signal.aborted) error = new IterationTimeoutError(timeoutMs);
  else if (providerError) error = new LlmProviderError(providerError.message, providerError.code);
  else if (failure) {
    error =
      failure instanceof LlmClientError
        ? new LlmCallError(failure.message, { cause: failure })
        : failure;
  }

  recordLlmMetrics(run, response, started, requestStatus(error, aborted));

  if (error) {
    const status = aborted ? abortedEventStatus(aborted) : "failed";
    for (const event of [thinkingEvent, response.textEvent]) {
      if (event) await run.timeline.complete(event, { status });
    }
  } else if (thinkingEvent) {
    await run.timeline.complete(thinkingEvent);
  }

  const interactionType =
    typeof options.interactionType === "function"
      ? options.interactionType(error ? null : response)
      : options.interactionType;
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
    responseMetadata:
      response.codeExecutions.length > 0 || response.groundings.length > 0
        ? { code_executions: response.codeExecutions, groundings: response.groundings }
        : null,
    usage: response.usage,
    durationMs: response.durationMs,
    errorMessage: error ? error.message : null,
  };
  run.writes.enqueue(() => run.store.recordLlmInteraction(interaction));

  if (error) throw error;
  return response;
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
