import type { ExecutionKind } from "@tarsy/contracts";
import type { StoredMessage, StoredToolCall, TimelineEventRecord } from "./ports.ts";

/**
 * Resuming an interrupted execution (a runner killed or shut down mid-loop): the next attempt
 * continues the stored conversation instead of starting over, so finished LLM turns and tool
 * calls are neither paid for nor run again. Only the step that was in flight runs again: an
 * LLM call whose answer was not stored is asked again (a partial stream is discarded), and a
 * tool call of the last turn with no stored result is called again, once.
 */

/** Kinds that run the tool loop; the single-call kinds simply run again. */
export const RESUMABLE_KINDS: readonly ExecutionKind[] = ["investigation", "action", "chat"];

export type ResumePlan =
  | {
      resumable: true;
      /** Assistant turns kept (LLM calls not made again). */
      llmTurns: number;
      /** Tool results kept (tool calls not made again). */
      toolResults: number;
      /** Calls of the last turn that have no result: in flight when the attempt ended. */
      pendingCalls: StoredToolCall[];
    }
  | { resumable: false; reason: string };

/**
 * Whether a stored conversation can be continued, and what is left of its last step. It must
 * be what the loop writes: the system prompt, the task, then turns in which every tool call
 * of an assistant message is answered once by the `tool` messages right after it (user
 * messages, such as sub-agent results or the forced-conclusion request, only between turns).
 * Only the last turn may miss results. A last assistant message without tool calls is an
 * answer that was given but not recorded: such a conversation starts over.
 */
export function planResume(messages: readonly StoredMessage[]): ResumePlan {
  const [system, task] = messages;
  if (system?.role !== "system" || task?.role !== "user") {
    return { resumable: false, reason: "the stored conversation does not begin with its prompt" };
  }
  let llmTurns = 0;
  let toolResults = 0;
  /** The calls of the current turn still waiting for their result. */
  let open: StoredToolCall[] = [];
  let lastAssistantAnswered = false;
  for (const [index, message] of messages.entries()) {
    if (index < 2) continue;
    switch (message.role) {
      case "assistant":
        if (open.length > 0) {
          return { resumable: false, reason: `turn ${llmTurns} has tool calls without results` };
        }
        llmTurns++;
        open = [...(message.toolCalls ?? [])];
        lastAssistantAnswered = open.length === 0;
        break;
      case "tool": {
        const at = open.findIndex((call) => call.id === message.toolCallId);
        if (at < 0) {
          return {
            resumable: false,
            reason: `a tool result (${message.toolCallId ?? "no call id"}) answers no open call`,
          };
        }
        open.splice(at, 1);
        toolResults++;
        break;
      }
      case "user":
        if (open.length > 0) {
          return { resumable: false, reason: `turn ${llmTurns} has tool calls without results` };
        }
        lastAssistantAnswered = false;
        break;
      case "system":
        return { resumable: false, reason: "a system message in the middle of the conversation" };
    }
  }
  if (lastAssistantAnswered && messages.at(-1)?.role === "assistant") {
    return { resumable: false, reason: "its answer was given but not recorded" };
  }
  return { resumable: true, llmTurns, toolResults, pendingCalls: open };
}

/**
 * Whether a pending call was already called again by an earlier resumption (and cut again):
 * it is called again once only. Such a call's `llm_tool_call` event carries `resumed: true`,
 * and the interrupted attempt's events are the ones ended when this attempt started.
 */
export function alreadyRepeated(
  callId: string,
  interrupted: readonly TimelineEventRecord[],
): boolean {
  return interrupted.some(
    (event) =>
      event.eventType === "llm_tool_call" &&
      event.metadata?.call_id === callId &&
      event.metadata?.resumed === true,
  );
}

/** What a resumed attempt tells the agent about a cut call it does not make again. */
export function notRepeatedResult(reason: "not_idempotent" | "already_repeated"): string {
  const why =
    reason === "not_idempotent"
      ? "its MCP server is marked not idempotent (idempotent: false), so it was not run again"
      : "it was already run again once after an earlier interruption, so it was not run a third time";
  return `Tool call outcome unknown: the agent's runner stopped while this call was running, and ${why}. It may or may not have taken effect; check its effect before relying on it or repeating it.`;
}
