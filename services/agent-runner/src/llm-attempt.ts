import type { LLMInteractionType, TimelineEventType, TokenUsage } from "@tarsy/contracts";
import {
  type ConversationMessage,
  continuityFor,
  createContinuityCollector,
  type LlmConfig,
  type ReasoningContinuity,
  type ToolCall,
} from "@tarsy/llm-client";
import { abortReasonOf, IterationTimeoutError, LlmProviderError } from "./errors.ts";
import type { ProviderStreamLimits } from "./execution-context.ts";
import { type StreamLimits, watchStream } from "./llm-watchdog.ts";
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
  /**
   * Offer the provider's native tools (Google search, code execution, URL context) when no
   * MCP tools are bound; false for calls that must answer from the prompt alone
   * (summarization). Default true.
   */
  nativeTools?: boolean;
  /**
   * An iteration of a loop: its attempts end where the agent's wrap-up begins (the time
   * budget), so that they cannot eat the time its forced conclusion needs.
   */
  withinBudget?: boolean;
  /**
   * An investigation-style loop call (its prefix repeats every turn): mark it for the
   * provider's prompt cache, unless `system.prompt_caching.enabled` is false. Default false.
   */
  promptCache?: boolean;
}

/** The llm-service config of one call: without native tools when the call turns them off. */
export function requestLlmConfig(
  llm: LlmConfig,
  options: Pick<LlmCallOptions, "nativeTools">,
): LlmConfig {
  if (options.nativeTools !== false || !llm.nativeTools) return llm;
  const { nativeTools: _, ...rest } = llm;
  return rest;
}

/**
 * The streaming events of one LLM call. They outlive a cut attempt: the retry resets and
 * reuses them, so the timeline keeps one thinking and one text event per call.
 */
export interface StreamedEvents {
  thinking: LiveEvent | null;
  text: LiveEvent | null;
}

export interface AttemptOutcome {
  response: LlmResponse;
  /** Why the attempt failed, by precedence: abort, iteration timeout, provider, transport. */
  error: Error | null;
  /** Some of the answer had arrived (a failure then breaks off a partial stream). */
  receivedOutput: boolean;
}

export function emptyResponse(): LlmResponse {
  return {
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
}

function toUsage(chunk: {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  thinkingTokens: number;
  cacheReadTokens: number;
  cacheCreationTokens: number;
}): TokenUsage {
  return {
    input_tokens: chunk.inputTokens,
    output_tokens: chunk.outputTokens,
    total_tokens: chunk.totalTokens,
    thinking_tokens: chunk.thinkingTokens,
    cache_read_tokens: chunk.cacheReadTokens,
    cache_creation_tokens: chunk.cacheCreationTokens,
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
 * Streams one attempt of an LLM call into the timeline: thinking and text deltas go to the
 * call's streaming events as stream chunks; code executions and grounding become events of
 * their own. Runs under the per-iteration timeout and the first-chunk/stall timeouts.
 */
export async function streamAttempt(
  run: RunContext,
  options: LlmCallOptions,
  events: StreamedEvents,
): Promise<AttemptOutcome> {
  const { exec } = run;
  const timeoutMs = options.withinBudget
    ? run.budget.clampMs(exec.config.iterationTimeoutMs)
    : exec.config.iterationTimeoutMs;
  const timer = new AbortController();
  const timeout = setTimeout(() => timer.abort(), timeoutMs);
  const signal = AbortSignal.any([run.signal, timer.signal]);
  const response = emptyResponse();
  // Per attempt: a cut attempt's continuity data goes with its discarded answer.
  const continuity = createContinuityCollector();
  let providerError: LlmProviderError | null = null;
  let failure: Error | null = null;
  let receivedOutput = false;
  try {
    const stream = watchStream(
      (callSignal) =>
        run.llm.generate(
          {
            sessionId: exec.sessionId,
            executionId: exec.executionId,
            agentName: exec.agentName,
            messages: continuityFor(options.messages, exec.config.providerName),
            tools: options.tools.map((t) => ({
              name: t.name,
              description: t.description,
              parameters: t.inputSchema,
            })),
            config: requestLlmConfig(exec.config.llm, options),
            promptCache: options.promptCache === true && exec.promptCaching !== false,
          },
          { signal: callSignal },
        ),
      { ...run.llmRetry, ...definedLimits(exec.config.streamLimits) },
      signal,
    );
    for await (const chunk of stream) {
      continuity.add(chunk);
      if (chunk.type !== "error") receivedOutput = true;
      switch (chunk.type) {
        case "thinking":
          response.thinking += chunk.content;
          if (options.streamThinking !== false) {
            events.thinking ??= await run.timeline.create("llm_thinking", {
              metadata: { source: "native" },
            });
            run.timeline.delta(events.thinking, chunk.content);
          }
          break;
        case "text":
          if (!chunk.content) break; // a bare thought signature
          response.text += chunk.content;
          events.text ??= await run.timeline.create(options.textEventType, {
            metadata: options.textEventMetadata ?? null,
            ...(options.textEventScope && { scope: options.textEventScope }),
          });
          run.timeline.delta(events.text, chunk.content);
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
          providerError = new LlmProviderError(
            chunk.message,
            chunk.code,
            chunk.partialOutput,
            chunk.retriesExhausted,
          );
          break;
      }
    }
  } catch (err) {
    failure = err instanceof Error ? err : new Error(String(err));
  } finally {
    clearTimeout(timeout);
  }
  response.textEvent = events.text;
  const produced = continuity.result();
  response.continuity = produced && { ...produced, producer: exec.config.providerName };
  let error: Error | null = null;
  const aborted = abortReasonOf(run.signal);
  if (aborted) error = aborted;
  else if (timer.signal.aborted) error = new IterationTimeoutError(timeoutMs);
  else if (providerError) error = providerError;
  else error = failure;
  return { response, error, receivedOutput };
}

/** The provider's own first-chunk and stall timeouts, where it sets them. */
function definedLimits(limits: ProviderStreamLimits): Partial<StreamLimits> {
  return {
    ...(limits.firstChunkTimeoutMs !== undefined && {
      firstChunkTimeoutMs: limits.firstChunkTimeoutMs,
    }),
    ...(limits.stallTimeoutMs !== undefined && { stallTimeoutMs: limits.stallTimeoutMs }),
  };
}
