import { parseActionMarker } from "../action-marker.ts";
import { Conversation } from "../conversation.ts";
import { ExecutionSuspendedError, IterationTimeoutError } from "../errors.ts";
import { callLlm } from "../llm-call.ts";
import type { ToolDefinition, ToolScope } from "../ports.ts";
import { buildFunctionCallingMessages, forcedConclusionPrompt } from "../prompts/index.ts";
import { alreadyRepeated, notRepeatedResult } from "../resume.ts";
import type { ControllerResult, RunContext } from "../run-context.ts";
import type { WrapUpReason } from "../time-budget.ts";
import { isMutatingCall } from "./action-gate.ts";
import { onIterationTimeout, recordIterationTimeout, toolLessCall } from "./single-call.ts";
import { executeToolCall, splitToolName, toolCallMetadata } from "./tool-execution.ts";

/**
 * The investigation loop with structured function calling (google-native and langchain
 * backends). Chat runs the same loop with chat prompting. Each iteration is one LLM call with
 * the tools bound: tool calls are executed and answered with `tool` messages; a response
 * without tool calls is the final analysis. At `max_iterations` one more call without tools
 * forces a conclusion.
 */
export async function runFunctionCalling(
  run: RunContext,
  tools: readonly ToolDefinition[],
  scope: ToolScope,
): Promise<ControllerResult> {
  const { exec } = run;
  const conversation = new Conversation(
    run.store,
    { sessionId: exec.sessionId, stageId: exec.stageId, executionId: exec.executionId },
    run.resume,
  );
  try {
    // A resumed loop continues its stored conversation (and counts its iterations so far).
    if (!run.resume) {
      for (const message of buildFunctionCallingMessages(exec)) conversation.append(message);
    }
    // After an interruption: the calls that were cut off, before the next LLM call.
    await finishPendingCalls(run, scope, conversation);
    const finalType = exec.chat ? "chat_response" : "final_analysis";
    let consecutiveTimeouts = 0;
    // Why the loop would end without an answer: its iterations ran out, unless its time does.
    let wrapUp: WrapUpReason = "max_iterations";
    let iterationsUsed = conversation.assistantTurns;

    for (
      let iteration = conversation.assistantTurns + 1;
      iteration <= exec.config.maxIterations;
      iteration++
    ) {
      let response: Awaited<ReturnType<typeof callLlm>>;
      // Sub-agents that ended since the last call: their outcomes come first.
      if (run.subAgents) await run.subAgents.deliver(conversation);
      await conversation.flush();
      // The time budget's reserve is all that is left: conclude while a call can still finish.
      if (run.budget.mustWrapUp()) {
        wrapUp = "time_budget";
        break;
      }
      // While sub-agents work (or an outcome is on its way), an answer cannot be final.
      const waiting = run.subAgents ? await run.subAgents.pending() : false;
      iterationsUsed = iteration;
      try {
        response = await callLlm(run, {
          messages: conversation.messages,
          tools,
          interactionType: (r) =>
            r && r.toolCalls.length === 0 && !waiting ? finalType : "iteration",
          iteration,
          textEventType: "llm_response",
          lastMessageId: conversation.lastMessageId,
          withinBudget: true,
          // The loop resends tools, system prompt and history each turn: cache them (ADR-0026),
          // except for action agents, whose usual single turn would pay a write never read.
          promptCache: exec.kind !== "action",
        });
      } catch (err) {
        if (!(err instanceof IterationTimeoutError)) throw err;
        consecutiveTimeouts++;
        if (run.budget.mustWrapUp()) {
          // Cut at the wrap-up (or timed out in the squeeze): conclude rather than fail.
          await recordIterationTimeout(run, err, consecutiveTimeouts, iteration);
          wrapUp = "time_budget";
          break;
        }
        await onIterationTimeout(run, err, consecutiveTimeouts, iteration);
        continue;
      }
      consecutiveTimeouts = 0;

      if (response.toolCalls.length === 0 && run.subAgents && waiting) {
        // An answer while sub-agents still work is not final: wait for the next result (with
        // the runner slot freed), then go on.
        if (response.textEvent) await run.timeline.complete(response.textEvent);
        conversation.append({
          role: "assistant",
          content: response.text,
          ...(response.continuity && { continuity: response.continuity }),
        });
        const waited = await run.subAgents.waitOrSuspend(conversation, run.usage, run.budget);
        if (waited === "suspended") throw new ExecutionSuspendedError(exec.executionId);
        continue;
      }

      if (response.toolCalls.length === 0) {
        // No tool calls: this is the answer. The streamed text event becomes the final analysis
        // (an action agent's without its YES/NO line).
        const answer = actionAnswer(run, response.text);
        if (response.textEvent) {
          await run.timeline.complete(response.textEvent, {
            eventType: "final_analysis",
            ...(answer.actionsExecuted !== undefined && {
              content: answer.finalAnalysis,
              metadata: { actions_executed: answer.actionsExecuted },
            }),
          });
        } else {
          await run.timeline.create("final_analysis", {
            status: "completed",
            content: answer.finalAnalysis,
            ...(answer.actionsExecuted !== undefined && {
              metadata: { actions_executed: answer.actionsExecuted },
            }),
          });
        }
        conversation.append({
          role: "assistant",
          content: response.text,
          ...(response.continuity && { continuity: response.continuity }),
        });
        await conversation.flush();
        return answer;
      }

      if (response.textEvent) await run.timeline.complete(response.textEvent);
      conversation.append({
        role: "assistant",
        content: response.text,
        toolCalls: response.toolCalls,
        ...(response.continuity && { continuity: response.continuity }),
      });
      // Stored as each step ends: an interrupted attempt's successor runs only what is left.
      await conversation.flush();
      for (const call of response.toolCalls) {
        await executeToolCall(run, scope, conversation, call);
        await conversation.flush();
      }
    }

    // Out of iterations or out of time: one more call, without tools, for the best conclusion
    // so far. Sub-agents still at work are not waited for (they are cancelled when it ends).
    run.logger.info(
      { reason: wrapUp, iterations_used: iterationsUsed, remaining_ms: run.budget.remainingMs() },
      "forced conclusion",
    );
    const prompt = forcedConclusionPrompt(wrapUp, exec.config.maxIterations);
    // A resumed loop interrupted during its conclusion has asked for it already.
    const last = conversation.messages.at(-1);
    if (last?.role !== "user" || last.content !== prompt) {
      conversation.append({ role: "user", content: prompt });
    }
    const text = await toolLessCall(run, conversation, {
      interactionType: "forced_conclusion",
      eventType: "final_analysis",
      eventMetadata: {
        forced_conclusion: true,
        reason: wrapUp,
        iterations_used: iterationsUsed,
        max_iterations: exec.config.maxIterations,
      },
      iteration: iterationsUsed + 1,
    });
    return { ...actionAnswer(run, text), forcedConclusion: wrapUp };
  } finally {
    // Whatever stopped the loop, what was said so far is stored.
    await conversation.flush().catch(() => undefined);
  }
}

/**
 * A resumed loop's calls that were cut off by the interruption (the last turn's calls without
 * a result), made again in order, once. A call to a server marked `idempotent: false`, or one
 * already made again after an earlier interruption, is not: its result tells the agent that
 * its outcome is unknown. An action agent's mutating call goes by its action request (made
 * once when approved, answered when denied, waited for when pending): a resumption after a
 * decision makes or answers it here.
 */
async function finishPendingCalls(
  run: RunContext,
  scope: ToolScope,
  conversation: Conversation,
): Promise<void> {
  const pending = run.resume?.pendingCalls ?? [];
  const unsafe = new Set(run.exec.config.nonIdempotentServers ?? []);
  for (const call of pending) {
    if (isMutatingCall(scope, call.name)) {
      // Its action request says whether it was made, may be made, or waits (never blindly again).
      await executeToolCall(run, scope, conversation, call, { resumed: true });
      await conversation.flush();
      continue;
    }
    const { server } = splitToolName(call.name);
    const skip = unsafe.has(server)
      ? "not_idempotent"
      : alreadyRepeated(call.id, run.resume?.interrupted ?? [])
        ? "already_repeated"
        : null;
    if (skip) {
      const content = notRepeatedResult(skip);
      await run.timeline.create("llm_tool_call", {
        status: "completed",
        content,
        metadata: {
          ...toolCallMetadata(call),
          is_error: true,
          not_repeated: skip,
        },
      });
      conversation.append({ role: "tool", content, toolCallId: call.id, toolName: call.name });
    } else {
      await executeToolCall(run, scope, conversation, call, { resumed: true });
    }
    await conversation.flush();
  }
}

/**
 * An action agent's answer: its YES/NO last line becomes `actionsExecuted` and leaves the text
 * (a missing line is null, with a warning). Other kinds keep the text as it is.
 */
function actionAnswer(run: RunContext, text: string): ControllerResult {
  if (run.exec.kind !== "action") return { finalAnalysis: text };
  const marker = parseActionMarker(text);
  if (marker.actionsExecuted === null) {
    run.logger.warn(
      "action agent did not end with a YES/NO line; whether it acted is unknown (actions_executed null)",
    );
  }
  return { finalAnalysis: marker.text, actionsExecuted: marker.actionsExecuted };
}
