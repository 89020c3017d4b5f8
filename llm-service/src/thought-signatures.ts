/**
 * Reasoning continuity kept per execution id, so the next turn of the same agent execution
 * sends the model's signed reasoning back with its earlier parts: Gemini thought signatures
 * and Anthropic signed (or redacted) thinking blocks, which Anthropic requires before
 * tool_use blocks when extended thinking is on. Bounded (least recently used entries go
 * first) and expiring after a TTL.
 */
export interface ThoughtSignatureCacheOptions {
  maxEntries: number;
  ttlMs: number;
  now?: () => number;
}

/** An Anthropic thinking block as it must be replayed. */
export interface ReasoningBlock {
  text: string;
  signature?: string;
  redactedData?: string;
}

export interface ExecutionSignatures {
  /** Signature of each function call, by the call id the caller saw. */
  byCallId: Map<string, string>;
  /** Thinking blocks that preceded a turn's tool calls, by that turn's first call id. */
  reasoningByCallId: Map<string, ReasoningBlock[]>;
  /** Signature of the last text part of the last model turn. */
  lastText?: string;
}

export interface ThoughtSignatureCache {
  get(executionId: string): ExecutionSignatures | undefined;
  rememberCall(executionId: string, callId: string, signature: string): void;
  rememberText(executionId: string, signature: string): void;
  rememberReasoning(executionId: string, callId: string, blocks: ReasoningBlock[]): void;
  readonly size: number;
}

interface Entry {
  value: ExecutionSignatures;
  expiresAt: number;
}

export function createThoughtSignatureCache(
  options: ThoughtSignatureCacheOptions,
): ThoughtSignatureCache {
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();

  const touch = (executionId: string): ExecutionSignatures => {
    const existing = entries.get(executionId);
    const value =
      existing && existing.expiresAt > now()
        ? existing.value
        : {
            byCallId: new Map<string, string>(),
            reasoningByCallId: new Map<string, ReasoningBlock[]>(),
          };
    entries.delete(executionId);
    entries.set(executionId, { value, expiresAt: now() + options.ttlMs });
    while (entries.size > options.maxEntries) {
      const oldest = entries.keys().next().value;
      if (oldest === undefined) break;
      entries.delete(oldest);
    }
    return value;
  };

  return {
    get(executionId) {
      const entry = entries.get(executionId);
      if (!entry) return undefined;
      if (entry.expiresAt <= now()) {
        entries.delete(executionId);
        return undefined;
      }
      return entry.value;
    },
    rememberCall(executionId, callId, signature) {
      if (!executionId) return;
      touch(executionId).byCallId.set(callId, signature);
    },
    rememberText(executionId, signature) {
      if (!executionId) return;
      touch(executionId).lastText = signature;
    },
    rememberReasoning(executionId, callId, blocks) {
      if (!executionId || blocks.length === 0) return;
      touch(executionId).reasoningByCallId.set(callId, blocks);
    },
    get size() {
      return entries.size;
    },
  };
}
