import type { ToolCall } from "@tarsy/llm-client";
import type { Conversation } from "../conversation.ts";
import { abortedEventStatus, abortReasonOf, ExecutionSuspendedError } from "../errors.ts";
import type { ToolCallResult, ToolScope } from "../ports.ts";
import { fenceUntrusted } from "../prompts/untrusted.ts";
import type { RunContext } from "../run-context.ts";
import { truncateForStorage } from "../truncation.ts";
import {
  answerAfterFailure,
  type GateOutcome,
  gateMutatingCall,
  isMutatingCall,
} from "./action-gate.ts";
import { maybeSummarize } from "./summarize.ts";

/**
 * What the LLM is given for a result: TARSy's own answers as they are (the gateway's refusals,
 * the runner's tools, an infrastructure failure); whatever a server (or a memory) returned,
 * fenced as untrusted data.
 */
function toolResultForLlm(
  result: ToolCallResult,
  server: string,
  tool: string,
  forLlm: { content: string; note?: string },
): string {
  if (result.source === "tarsy") return forLlm.content;
  const fenced = fenceUntrusted("tool_result", forLlm.content, {
    tool: server ? `${server}.${tool}` : tool,
  });
  return forLlm.note ? `${forLlm.note}\n\n${fenced}` : fenced;
}

/** `server.tool` or the function-calling form `server__tool` → its parts. */
export function splitToolName(name: string): { server: string; tool: string } {
  const dot = name.indexOf(".");
  if (dot > 0) return { server: name.slice(0, dot), tool: name.slice(dot + 1) };
  const sep = name.indexOf("__");
  if (sep > 0) return { server: name.slice(0, sep), tool: name.slice(sep + 2) };
  return { server: "", tool: name };
}

function parseArguments(raw: string): unknown {
  if (raw.trim() === "") return {};
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/** An `llm_tool_call` event's description of the call: server, tool, arguments, call id. */
export function toolCallMetadata(call: ToolCall): Record<string, unknown> {
  const names = splitToolName(call.name);
  return {
    server_name: names.server,
    tool_name: names.tool,
    arguments: parseArguments(call.arguments),
    call_id: call.id,
  };
}

/**
 * One tool call of the LLM: an `llm_tool_call` event (arguments in metadata) completed with
 * the storage-truncated result and `is_error`, an MCPInteraction record, summarization when
 * the result is large, and the `tool` message the LLM sees next.
 */
export async function executeToolCall(
  run: RunContext,
  scope: ToolScope,
  conversation: Conversation,
  call: ToolCall,
  options: { resumed?: boolean } = {},
): Promise<void> {
  const names = splitToolName(call.name);
  const args = parseArguments(call.arguments);
  const event = await run.timeline.create("llm_tool_call", {
    metadata: {
      ...toolCallMetadata(call),
      // Made again by a resumed attempt (the interrupted one was cut off during it).
      ...(options.resumed && { resumed: true }),
    },
  });
  // An action agent's mutating call needs its approved request (or is answered without it).
  let actionId: string | undefined;
  if (isMutatingCall(scope, call.name)) {
    let gate: GateOutcome;
    try {
      gate = await gateMutatingCall(run, scope, conversation, call, names.server, names.tool, args);
    } catch (err) {
      if (err instanceof ExecutionSuspendedError) {
        await run.timeline.complete(event, {
          content: "Waiting for a person to approve or deny this call.",
          metadata: { action_status: "pending", awaiting_approval: true },
        });
      }
      throw err;
    }
    if (gate.kind === "answer") {
      await run.timeline.complete(event, {
        content: truncateForStorage(gate.content),
        metadata: { is_error: gate.isError, action_id: gate.actionId, action_state: gate.state },
      });
      conversation.append({
        role: "tool",
        content: gate.content,
        toolCallId: call.id,
        toolName: call.name,
      });
      return;
    }
    actionId = gate.actionId;
  }
  const started = performance.now();
  // A tool call cannot eat the time the agent's forced conclusion needs (its time budget).
  const wrapUp =
    run.budget.wrapUpAt() === null
      ? null
      : AbortSignal.timeout(run.budget.clampMs(Number.MAX_SAFE_INTEGER));
  let result: ToolCallResult;
  try {
    result = await run.tools.callTool(
      scope,
      {
        callId: call.id,
        name: call.name,
        arguments: call.arguments,
        ...(actionId !== undefined && { approvalId: actionId }),
      },
      wrapUp ? AbortSignal.any([run.signal, wrapUp]) : run.signal,
    );
  } catch (err) {
    const aborted = abortReasonOf(run.signal);
    if (aborted) {
      await run.timeline.complete(event, { status: abortedEventStatus(aborted) });
      throw aborted;
    }
    // Infrastructure failure: the LLM sees it as a failed tool and carries on.
    const why = wrapUp?.aborted
      ? "the agent's time budget ran down to its wrap-up, so the call was abandoned"
      : err instanceof Error
        ? err.message
        : String(err);
    result = {
      server: names.server,
      tool: names.tool,
      arguments: undefined,
      content:
        actionId === undefined
          ? `Tool call failed: ${why}`
          : await answerAfterFailure(run, actionId, why),
      isError: true,
      source: "tarsy",
      durationMs: Math.round(performance.now() - started),
    };
  }
  const stored = truncateForStorage(result.content);
  await run.timeline.complete(event, {
    content: stored,
    metadata: {
      is_error: result.isError,
      ...(actionId !== undefined && { action_id: actionId, action_state: "made" }),
    },
  });
  const server = result.server ?? names.server;
  const tool = result.tool ?? names.tool;
  const interaction = {
    sessionId: run.exec.sessionId,
    stageId: run.exec.stageId,
    executionId: run.exec.executionId,
    interactionType: "tool_call" as const,
    serverName: server,
    toolName: tool,
    toolArguments:
      result.arguments ??
      (typeof args === "object" && args !== null && !Array.isArray(args)
        ? (args as Record<string, unknown>)
        : { input: args }),
    toolResult: { content: stored, is_error: result.isError },
    availableTools: null,
    durationMs: result.durationMs,
    errorMessage: result.isError ? stored : null,
  };
  run.writes.enqueue(() => run.store.recordMcpInteraction(interaction));

  const forLlm = await maybeSummarize(run, {
    server,
    tool,
    raw: result.content,
    conversationContext: conversation.contextForSummarization(),
  });
  conversation.append({
    role: "tool",
    content: toolResultForLlm(result, server, tool, forLlm),
    toolCallId: call.id,
    toolName: call.name,
  });
  if (abortReasonOf(run.signal)) throw abortReasonOf(run.signal);
}
