import type { ConversationMessage } from "@tarsy/llm-client";
import type { RunnerStore } from "./ports.ts";
import type { TimelineScope } from "./timeline.ts";

/**
 * The LLM conversation of one execution: linear, every message stored as it is appended
 * (Message rows, 1-based sequence), so each LLM request can be rebuilt from the table.
 */
export class Conversation {
  private readonly list: ConversationMessage[] = [];
  private lastId: string | null = null;

  constructor(
    private readonly store: RunnerStore,
    private readonly scope: TimelineScope & { executionId: string },
  ) {}

  get messages(): readonly ConversationMessage[] {
    return this.list;
  }

  /** Id of the newest stored message (the end of the next request's conversation). */
  get lastMessageId(): string | null {
    return this.lastId;
  }

  async append(message: ConversationMessage): Promise<void> {
    this.list.push(message);
    const stored = await this.store.appendMessage({
      sessionId: this.scope.sessionId,
      stageId: this.scope.stageId,
      executionId: this.scope.executionId,
      role: message.role,
      content: message.content,
      ...(message.toolCalls && message.toolCalls.length > 0 && { toolCalls: message.toolCalls }),
      ...(message.toolCallId !== undefined && { toolCallId: message.toolCallId }),
      ...(message.toolName !== undefined && { toolName: message.toolName }),
    });
    this.lastId = stored.id;
  }

  /** The conversation as text for the summarizer (system messages excluded). */
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
