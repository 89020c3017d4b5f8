import type {
  ConversationMessage,
  LlmChunk,
  ReasoningBlock,
  ReasoningContinuity,
} from "./types.ts";

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

/**
 * The conversation as `provider` is to be sent it. Reasoning continuity (a Gemini thought
 * signature, an Anthropic thinking block's signature) can be verified only by the model that
 * produced it; after a switch to a fallback provider, the continuity of the earlier provider's
 * answers is left out (the text and tool calls stay), as the Go TARSy clears its provider cache
 * on the first call after a fallback. Continuity with no recorded producer is kept.
 */
export function continuityFor(
  messages: readonly ConversationMessage[],
  provider: string,
): ConversationMessage[] {
  return messages.map((message) => {
    const producer = message.continuity?.producer;
    if (producer === undefined || producer === provider) return message;
    const { continuity: _foreign, ...rest } = message;
    return rest;
  });
}
