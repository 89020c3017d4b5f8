import { abortReasonOf } from "../errors.ts";
import type { AgentRunConfig, SummarizationModel } from "../execution-context.ts";
import { callLlm } from "../llm-call.ts";
import { ProviderFallback } from "../llm-fallback.ts";
import {
  summarizationSystemPrompt,
  summarizationUserPrompt,
  summaryNote,
} from "../prompts/index.ts";
import type { RunContext } from "../run-context.ts";
import { estimateTokens, truncateForSummarization } from "../truncation.ts";

export interface SummarizationResult {
  /** The raw result, or its summary. */
  content: string;
  summarized: boolean;
  /** TARSy's note that a summary stands in for the result (kept out of the untrusted fence). */
  note?: string;
}

/**
 * Summarizes a tool result that exceeds its server's threshold (an `mcp_tool_summary`
 * event streams the summary). Fail-open: when the summarization call fails or returns
 * nothing, the raw result is used. Cancellation still propagates.
 */
export async function maybeSummarize(
  run: RunContext,
  input: { server: string; tool: string; raw: string; conversationContext: string },
): Promise<SummarizationResult> {
  const settings = run.exec.summarization.get(input.server);
  const raw = { content: input.raw, summarized: false };
  if (!settings?.enabled) return raw;
  const tokens = estimateTokens(input.raw);
  if (tokens <= settings.sizeThresholdTokens) return raw;

  const messages = [
    {
      role: "system" as const,
      content: summarizationSystemPrompt(input.server, input.tool, settings.summaryMaxTokenLimit),
    },
    {
      role: "user" as const,
      content: summarizationUserPrompt(
        input.conversationContext,
        input.server,
        input.tool,
        truncateForSummarization(input.raw),
      ),
    },
  ];
  const metadata = { server_name: input.server, tool_name: input.tool, original_tokens: tokens };
  const summarizer = summarizerFor(run, settings.model);
  try {
    const response = await callLlm(summarizer, {
      messages,
      tools: [],
      // The summary comes from the tool result alone: no Google search or code execution.
      nativeTools: false,
      interactionType: "summarization",
      iteration: null,
      textEventType: "mcp_tool_summary",
      textEventMetadata: metadata,
      streamThinking: false,
      lastMessageId: null,
    });
    const summary = response.text.trim();
    if (!summary) {
      if (response.textEvent) await run.timeline.complete(response.textEvent, { status: "failed" });
      run.logger.warn(metadata, "summarization returned nothing; using the raw result");
      return raw;
    }
    if (response.textEvent) {
      await run.timeline.complete(
        response.textEvent,
        summarizer.fallback.hasFallenBack
          ? {
              metadata: {
                ...metadata,
                summarization_fallback: true,
                provider: summarizer.exec.config.providerName,
              },
            }
          : {},
      );
    }
    return {
      content: summary,
      note: summaryNote(input.server, input.tool, tokens),
      summarized: true,
    };
  } catch (err) {
    const aborted = abortReasonOf(run.signal);
    if (aborted) throw aborted;
    run.logger.warn({ ...metadata, err }, "summarization failed; using the raw result");
    return raw;
  }
}

/**
 * The run a summary call goes through: the summarization model (else the agent's current
 * one) with a fallback walk of its own, kept per primary for the rest of the execution. A
 * failed summary walks `defaults.summarization.fallback_list` (else the agent's list) without
 * ever changing the investigator's provider.
 */
function summarizerFor(run: RunContext, model: SummarizationModel | undefined): RunContext {
  const agent = run.exec.config;
  const primary = model ?? {
    providerName: agent.providerName,
    llm: agent.llm,
    streamLimits: agent.streamLimits,
  };
  if (!run.summarizers) run.summarizers = new Map();
  const byPrimary = run.summarizers;
  let state = byPrimary.get(primary.providerName);
  if (!state) {
    const config: AgentRunConfig = {
      ...agent,
      ...primary,
      fallbacks: run.exec.summarizationFallbacks ?? agent.fallbacks,
      requiresNativeTools: false,
    };
    state = { config, fallback: new ProviderFallback(config, "summarization") };
    byPrimary.set(primary.providerName, state);
  }
  return { ...run, exec: { ...run.exec, config: state.config }, fallback: state.fallback };
}
