/**
 * The feedback reflector (investigation memory, #24; the Go TARSy's, in the scoring stage):
 * one LLM call (interaction `memory_extraction`) reads a reviewer's written feedback with the
 * investigation and the memories it may touch, and answers like the automatic reflector —
 * memories to create (stored at confidence 0.9, sourced from the session), to reinforce and to
 * deprecate. The changes are written once per reflection, whatever redelivers the execution.
 */
import type { MemoryCategory } from "@tarsy/contracts";
import type { InvestigationMemory } from "@tarsy/db";
import { Conversation } from "../conversation.ts";
import { abortReasonOf } from "../errors.ts";
import {
  embeddingModelOf,
  indexMemoryVectors,
  type MemoryRuntime,
  parseReflectorAnswer,
  searchRunMemories,
} from "../memory.ts";
import {
  FEEDBACK_REFLECTOR_SYSTEM_PROMPT,
  feedbackReflectorUserPrompt,
} from "../prompts/memory.ts";
import type { ControllerResult, RunContext } from "../run-context.ts";
import { toolLessCall } from "./single-call.ts";

export class MissingFeedbackError extends Error {
  readonly code = "missing_feedback" as const;
  constructor(executionId: string) {
    super(`feedback reflection ${executionId} was requested without the reviewer's feedback`);
    this.name = "MissingFeedbackError";
  }
}

/**
 * What the reflector is shown: the session's own live memories first (what the feedback is
 * most likely about), then the project's memories most similar to the feedback, at most
 * `limit`, each once.
 */
export function memoriesToShow(
  own: readonly InvestigationMemory[],
  similar: readonly InvestigationMemory[],
  limit: number,
): InvestigationMemory[] {
  const seen = new Set<string>();
  const shown: InvestigationMemory[] = [];
  for (const m of [...own, ...similar]) {
    if (m.deprecated || seen.has(m.id)) continue;
    seen.add(m.id);
    shown.push(m);
  }
  return shown.slice(0, limit);
}

/** Similar memories, fail-open: a failed search shows the session's own alone. */
async function similarMemories(
  run: RunContext,
  memory: MemoryRuntime,
  text: string,
  exclude: readonly string[],
): Promise<InvestigationMemory[]> {
  try {
    const found = await searchRunMemories(
      run,
      memory,
      text,
      memory.config.reflector_memory_limit,
      exclude,
    );
    return found.map((f) => f.memory);
  } catch (err) {
    const aborted = abortReasonOf(run.signal);
    if (aborted) throw aborted;
    run.logger.warn({ err }, "no similar memories for the feedback reflector");
    return [];
  }
}

export async function runFeedbackReflection(run: RunContext): Promise<ControllerResult> {
  const { exec } = run;
  if (!exec.stageId) throw new Error(`feedback reflection ${exec.executionId} has no stage`);
  const feedback = exec.feedback;
  if (!feedback) throw new MissingFeedbackError(exec.executionId);
  const memory = run.memory;
  if (!memory) {
    return {
      finalAnalysis: "Investigation memory is disabled: the feedback was not reflected on.",
    };
  }
  const own = (await run.store.memories.ofSession(exec.sessionId)).filter((m) => !m.deprecated);
  const similar = await similarMemories(
    run,
    memory,
    feedback.text,
    own.map((m) => m.id),
  );
  const existing = memoriesToShow(own, similar, memory.config.reflector_memory_limit);

  const conversation = new Conversation(run.store, {
    sessionId: exec.sessionId,
    stageId: exec.stageId,
    executionId: exec.executionId,
  });
  conversation.append({ role: "system", content: FEEDBACK_REFLECTOR_SYSTEM_PROMPT });
  conversation.append({
    role: "user",
    content: feedbackReflectorUserPrompt({
      feedback: feedback.text,
      qualityRating: feedback.qualityRating,
      investigation: exec.previousContext ?? "",
      existing: existing.map((m) => ({
        id: m.id,
        content: m.content,
        category: m.category,
        valence: m.valence,
      })),
      alertType: memory.alertType,
      chainId: memory.chainId,
    }),
  });
  const answer = await toolLessCall(run, conversation, {
    interactionType: "memory_extraction",
    eventType: "llm_response",
    eventMetadata: { scoring_turn: "feedback_reflection" },
    iteration: 1,
  });
  const result = parseReflectorAnswer(answer);
  if (!result) {
    run.logger.warn(
      { length: answer.length },
      "the feedback reflector's answer is not a reflector result; no memories",
    );
    return { finalAnalysis: "The reflector's answer was unreadable: no memories changed." };
  }

  const creates = result.create;
  const vectors =
    creates.length > 0
      ? await memory.embed(
          creates.map((c) => c.content),
          "document",
          run.signal,
        )
      : [];
  const model = embeddingModelOf(memory.config.embedding);
  // Only memories the reflector was shown: an invented id changes nothing.
  const shown = new Set(existing.map((m) => m.id));
  const onlyShown = (ids: string[]) => ids.filter((id) => shown.has(id));
  const applied = await run.store.memories.applyFeedback(
    feedback.reflectionId,
    {
      project: memory.project,
      sourceSessionId: exec.sessionId,
      alertType: memory.alertType,
      chainId: memory.chainId,
    },
    {
      create: creates.map((c, i) => ({
        content: c.content,
        category: c.category as MemoryCategory,
        valence: c.valence,
        embedding: vectors?.[i] ?? [],
        embeddingModel: vectors?.[i] ? model : null,
      })),
      reinforce: onlyShown(result.reinforce.map((r) => r.memory_id)),
      deprecate: onlyShown(result.deprecate.map((d) => d.memory_id)),
    },
  );
  const counts = {
    created: applied.created.length,
    reinforced: applied.reinforced,
    deprecated: applied.deprecated,
  };
  if (!applied.applied) {
    run.logger.info("the feedback was reflected on by an earlier attempt; nothing written again");
    return { finalAnalysis: "The feedback was reflected on by an earlier attempt." };
  }
  run.logger.info(counts, "memories learned from the reviewer's feedback");
  if (counts.created > 0) await indexMemoryVectors(run);
  return {
    finalAnalysis: `From the reviewer's feedback: ${counts.created} memory(ies) created, ${counts.reinforced} reinforced, ${counts.deprecated} deprecated.`,
  };
}
