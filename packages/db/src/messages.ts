/** Message: one execution's LLM conversation, linear and numbered 1, 2, 3, … */
import type { MessageRole } from "@tarsy/contracts";
import { type DbClient, inTransaction } from "./client.ts";
import type { Message, Prisma } from "./generated/prisma/client.ts";

export interface ToolCallData {
  readonly id: string;
  readonly name: string;
  /** JSON text of the arguments. */
  readonly arguments: string;
}

export interface MessageInput {
  readonly role: MessageRole;
  readonly content: string;
  readonly toolCalls?: readonly ToolCallData[] | null;
  readonly toolCallId?: string | null;
  readonly toolName?: string | null;
  /** Assistant messages: opaque reasoning-continuity data (see the schema). */
  readonly continuity?: Prisma.InputJsonValue | null;
}

export interface ExecutionRef {
  readonly sessionId: string;
  readonly stageId: string | null;
  readonly executionId: string;
}

/**
 * Appends messages to an execution's conversation with the next sequence numbers. The
 * execution row is locked meanwhile, so concurrent appends queue instead of colliding.
 */
export function appendMessages(
  client: DbClient,
  ref: ExecutionRef,
  messages: readonly MessageInput[],
): Promise<Message[]> {
  return inTransaction(client, async (tx) => {
    await tx.$queryRaw`SELECT id FROM agent_executions WHERE id = ${ref.executionId}::uuid FOR UPDATE`;
    const { _max } = await tx.message.aggregate({
      where: { executionId: ref.executionId },
      _max: { sequenceNumber: true },
    });
    const first = (_max.sequenceNumber ?? 0) + 1;
    const created: Message[] = [];
    for (const [offset, m] of messages.entries()) {
      created.push(
        await tx.message.create({
          data: {
            sessionId: ref.sessionId,
            stageId: ref.stageId,
            executionId: ref.executionId,
            sequenceNumber: first + offset,
            role: m.role,
            content: m.content,
            toolCalls: (m.toolCalls ?? undefined) as Prisma.InputJsonValue | undefined,
            toolCallId: m.toolCallId ?? null,
            toolName: m.toolName ?? null,
            ...(m.continuity != null && { continuity: m.continuity }),
          },
        }),
      );
    }
    return created;
  });
}

/** The conversation in order; with `throughMessageId`, only up to and including that message. */
export async function listMessages(
  client: DbClient,
  executionId: string,
  throughMessageId?: string,
): Promise<Message[]> {
  let maxSequence: number | undefined;
  if (throughMessageId !== undefined) {
    const last = await client.message.findUnique({ where: { id: throughMessageId } });
    if (last === null || last.executionId !== executionId) return [];
    maxSequence = last.sequenceNumber;
  }
  return client.message.findMany({
    where: {
      executionId,
      ...(maxSequence === undefined ? {} : { sequenceNumber: { lte: maxSequence } }),
    },
    orderBy: { sequenceNumber: "asc" },
  });
}
