import type { ConversationMessage } from "@tarsy/llm-client";
import type { RunnerStore } from "./ports.ts";
import type { TimelineScope } from "./timeline.ts";

/**
 * The LLM conversation of one execution: linear, stored as Message rows (1-based sequence) so
 * each LLM request can be rebuilt from the table. Appended messages are written in one batch
 * before the next LLM call (`flush`), i.e. progressively, one transaction per iteration.
 */
export class Conversation {
  private readonly list: ConversationMessage[] = [];
  private pending: ConversationMessage[] = [];
  private deliveries: string[] = [];
  private lastId: string | null = null;

  constructor(
    private readonly store: RunnerStore,
    private readonly scope: TimelineScope & { executionId: string },
    /** A resumed execution's stored conversation (already in the table) and its newest id. */
    stored: { messages: readonly ConversationMessage[]; lastId: string | null } = {
      messages: [],
      lastId: null,
    },
  ) {
    this.list.push(...stored.messages);
    this.lastId = stored.lastId;
  }

  /** Assistant turns so far (the iterations a resumed loop already made). */
  get assistantTurns(): number {
    return this.list.filter((m) => m.role === "assistant").length;
  }

  get messages(): readonly ConversationMessage[] {
    return this.list;
  }

  /** Id of the newest stored message (call `flush` first). */
  get lastMessageId(): string | null {
    return this.lastId;
  }

  /**
   * Appends a message; `deliversSubAgent` names the sub-agent whose outcome it carries, marked
   * delivered when the message is stored.
   */
  append(message: ConversationMessage, deliversSubAgent?: string): void {
    this.list.push(message);
    this.pending.push(message);
    if (deliversSubAgent) this.deliveries.push(deliversSubAgent);
  }

  /** Stores the messages appended since the last flush. */
  async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    const batch = this.pending;
    const delivered = this.deliveries;
    this.pending = [];
    this.deliveries = [];
    const ids = await this.store.appendMessages(
      batch.map((message) => ({
        sessionId: this.scope.sessionId,
        stageId: this.scope.stageId,
        executionId: this.scope.executionId,
        role: message.role,
        content: message.content,
        ...(message.toolCalls && message.toolCalls.length > 0 && { toolCalls: message.toolCalls }),
        ...(message.toolCallId !== undefined && { toolCallId: message.toolCallId }),
        ...(message.toolName !== undefined && { toolName: message.toolName }),
        ...(message.continuity && { continuity: message.continuity }),
      })),
      delivered,
    );
    this.lastId = ids.at(-1) ?? this.lastId;
  }

  /**
   * The conversation as text for the summarizer (system messages excluded). Reasoning
   * continuity data is opaque and never part of a prompt.
   */
  contextForSummarization(): string {
    return this.list
      .filter((m) => m.role !== "system")
      .map((m) => {
        const calls =
          m.toolCalls?.map((c) => `\n[tool call ${c.name} ${c.arguments}]`).join("") ?? "";
        const label =
          m.role === "tool" ? `TOOL RESULT (${m.toolName ?? "?"})` : m.role.toUpperCase();
        return `${label}: ${m.content}${calls}`;
      })
      .join("\n\n");
  }
}
