import type { LLMInteractionType, TimelineEventType } from "@tarsy/contracts";
import type { ConversationMessage } from "@tarsy/llm-client";
import type { Conversation } from "../conversation.ts";
import { IterationTimeoutError } from "../errors.ts";
import { callLlm } from "../llm-call.ts";
import type { RunContext } from "../run-context.ts";
import type { LiveEvent, TimelineScope } from "../timeline.ts";

/** Two timeouts in a row fail the execution (the seeds' MaxConsecutiveTimeouts). */
export const MAX_CONSECUTIVE_TIMEOUTS = 2;

export class ConsecutiveTimeoutsError extends Error {
  readonly code = "consecutive_timeouts" as const;
  constructor(timeoutMs: number) {
    super(
      `LLM call timed out ${MAX_CONSECUTIVE_TIMEOUTS} times in a row (iteration timeout ${timeoutMs} ms)`,
    );
    this.name = "ConsecutiveTimeoutsError";
  }
}

/** Records a timed-out iteration on the timeline; throws when it is one too many. */
export async function onIterationTimeout(
  run: RunContext,
  err: IterationTimeoutError,
  consecutive: number,
  iteration: number,
): Promise<void> {
  await recordIterationTimeout(run, err, consecutive, iteration);
  if (consecutive >= MAX_CONSECUTIVE_TIMEOUTS) {
    throw new ConsecutiveTimeoutsError(err.timeoutMs);
  }
}

/** Records a timed-out iteration on the timeline. */
export async function recordIterationTimeout(
  run: RunContext,
  err: IterationTimeoutError,
  consecutive: number,
  iteration: number,
): Promise<void> {
  await run.timeline.create("error", {
    status: "completed",
    content: err.message,
    metadata: { kind: "iteration_timeout", iteration, consecutive },
  });
}

/**
 * One tool-less call whose whole text is the result (synthesis, forced conclusion, executive
 * summary), retried after a single timeout. Stores the assistant answer.
 */
export async function toolLessCall(
  run: RunContext,
  conversation: Conversation,
  options: {
    interactionType: LLMInteractionType;
    eventType: TimelineEventType;
    eventMetadata?: Record<string, unknown>;
    eventScope?: TimelineScope;
    iteration: number;
  },
): Promise<string> {
  let timeouts = 0;
  for (;;) {
    await conversation.flush();
    try {
      const response = await callLlm(run, {
        messages: conversation.messages as ConversationMessage[],
        tools: [],
        interactionType: options.interactionType,
        iteration: options.iteration,
        textEventType: options.eventType,
        ...(options.eventMetadata && { textEventMetadata: options.eventMetadata }),
        ...(options.eventScope && { textEventScope: options.eventScope }),
        lastMessageId: conversation.lastMessageId,
      });
      if (response.textEvent) await run.timeline.complete(response.textEvent);
      else {
        await run.timeline.create(options.eventType, {
          status: "completed",
          content: response.text,
          metadata: options.eventMetadata ?? null,
          ...(options.eventScope && { scope: options.eventScope }),
        });
      }
      conversation.append({
        role: "assistant",
        content: response.text,
        ...(response.continuity && { continuity: response.continuity }),
      });
      await conversation.flush();
      return response.text;
    } catch (err) {
      if (!(err instanceof IterationTimeoutError)) throw err;
      timeouts++;
      await onIterationTimeout(run, err, timeouts, options.iteration);
    }
  }
}

/**
 * `toolLessCall` whose text event is left open: the caller completes it, with the content
 * (and event type) it settles on (the executive summary strips its `LABELS:` line).
 */
export async function heldToolLessCall(
  run: RunContext,
  conversation: Conversation,
  options: Parameters<typeof toolLessCall>[2],
): Promise<{ text: string; event: LiveEvent }> {
  let timeouts = 0;
  for (;;) {
    await conversation.flush();
    try {
      const response = await callLlm(run, {
        messages: conversation.messages as ConversationMessage[],
        tools: [],
        interactionType: options.interactionType,
        iteration: options.iteration,
        textEventType: options.eventType,
        ...(options.eventMetadata && { textEventMetadata: options.eventMetadata }),
        ...(options.eventScope && { textEventScope: options.eventScope }),
        lastMessageId: conversation.lastMessageId,
      });
      const event =
        response.textEvent ??
        (await run.timeline.create(options.eventType, {
          status: "streaming",
          content: response.text,
          metadata: options.eventMetadata ?? null,
          ...(options.eventScope && { scope: options.eventScope }),
        }));
      conversation.append({
        role: "assistant",
        content: response.text,
        ...(response.continuity && { continuity: response.continuity }),
      });
      await conversation.flush();
      return { text: response.text, event };
    } catch (err) {
      if (!(err instanceof IterationTimeoutError)) throw err;
      timeouts++;
      await onIterationTimeout(run, err, timeouts, options.iteration);
    }
  }
}
