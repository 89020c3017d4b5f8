import type { LlmChunk, ReasoningBlock, ReasoningContinuity } from "./types.ts";

/** Gathers the reasoning-continuity data of one LLM response from its chunks. */
export interface ContinuityCollector {
  add(chunk: LlmChunk): void;
  /** What the response carried; undefined when it carried nothing. */
  result(): ReasoningContinuity | undefined;
}

/**
 * The opaque data (Gemini thought signatures, Anthropic signed thinking blocks) is kept
 * apart from the text and tool calls a caller shows and records: it belongs on the assistant
 * message (`continuity`), which sends it back to the provider on every later call.
 */
export function createContinuityCollector(): ContinuityCollector {
  const blocks: ReasoningBlock[] = [];
  const toolCallSignatures: Record<string, string> = {};
  let textSignature: string | undefined;
  return {
    add(chunk) {
      switch (chunk.type) {
        case "text":
          if (chunk.thoughtSignature) textSignature = chunk.thoughtSignature;
          break;
        case "tool_call":
          if (chunk.thoughtSignature) toolCallSignatures[chunk.callId] = chunk.thoughtSignature;
          break;
        case "reasoning":
          blocks.push({
            thinking: chunk.thinking,
            ...(chunk.signature && { signature: chunk.signature }),
            ...(chunk.redactedData && { redactedData: chunk.redactedData }),
          });
          break;
        default:
          break;
      }
    },
    result() {
      const hasCalls = Object.keys(toolCallSignatures).length > 0;
      if (blocks.length === 0 && !hasCalls && textSignature === undefined) return undefined;
      return {
        ...(blocks.length > 0 && { blocks }),
        ...(textSignature !== undefined && { textSignature }),
        ...(hasCalls && { toolCallSignatures }),
      };
    },
  };
}
