import { getChain, resolveChatAgentConfig, TarsyConfigError } from "@tarsy/config";
import {
  ACTIVE_EXECUTION_STATUSES,
  CHAT_SESSION_STATUSES,
  type ChatSubmitted,
} from "@tarsy/contracts";
import {
  createTimelineEvent,
  enqueueOutbox,
  failStageExecutions,
  getChatBySession,
  getChatUserMessage,
  getStageWithExecutions,
  listSessionStages,
  listSessionTimeline,
  openChatTurn,
  type Tx,
  touchChat,
  transitionStageStatus,
} from "@tarsy/db";
import { formatInvestigationContext, investigationOrder } from "../context/investigation.ts";
import { ownExecutions } from "./chain.ts";
import type { SagaDeps } from "./deps.ts";
import { queueStageStatus } from "./events.ts";
import { OrphanedWorkError } from "./orphans.ts";
import { withSession } from "./session-lock.ts";
import { chatTimeoutReason } from "./timeouts.ts";

/**
 * Answers a chat message: a chat stage with one chat-agent execution, a `user_question`
 * timeline event, and the whole session timeline (investigation and earlier turns) as context.
 * Idempotent per message. The turn gets its own deadline (`queue.chat_timeout`).
 */
export async function startChatTurn(deps: SagaDeps, message: ChatSubmitted): Promise<void> {
  await withSession(deps, message.session_id, async (tx, session, locked) => {
    const userMessage = await getChatUserMessage(tx, message.message_id);
    const chat = await getChatBySession(tx, session.id);
    if (!userMessage || chat?.id !== message.chat_id || userMessage.chatId !== chat.id) {
      throw new OrphanedWorkError("chat_message", message.message_id);
    }
    let agent: { agentName: string; backend: string; llmProvider: string };
    try {
      const chain = getChain(locked.config, session.chainId);
      const resolved = resolveChatAgentConfig(locked.config, chain);
      agent = {
        agentName: resolved.agent_name,
        backend: resolved.llm_backend,
        llmProvider: resolved.llm_provider_name,
      };
    } catch (err) {
      if (!(err instanceof TarsyConfigError)) throw err;
      agent = { agentName: "ChatAgent", backend: "langchain", llmProvider: "unknown" };
      await openAndFail(locked, tx, message, agent, err.message);
      return;
    }
    if (!CHAT_SESSION_STATUSES.includes(session.status)) {
      await openAndFail(locked, tx, message, agent, `session is ${session.status}`);
      return;
    }
    const { stage, executions, created } = await openChatTurn(tx, {
      sessionId: session.id,
      chatId: message.chat_id,
      messageId: message.message_id,
      stageId: message.stage_id,
      stageName: "Chat Response",
      agent,
    });
    if (!created) return;
    const now = locked.now();
    const question = await createTimelineEvent(tx, {
      sessionId: session.id,
      stageId: stage.id,
      executionId: null,
      eventType: "user_question",
      status: "completed",
      content: userMessage.content,
      metadata: { author: userMessage.author, message_id: userMessage.id },
    });
    await enqueueOutbox(tx, "timelineEventCreated", {
      v: 1,
      type: "timeline_event.created",
      session_id: session.id,
      stage_id: stage.id,
      execution_id: null,
      event_id: question.id,
      sequence_number: question.sequenceNumber,
      event_type: "user_question",
      status: "completed",
      content: question.content,
      metadata: { author: userMessage.author, message_id: userMessage.id },
      timestamp: question.createdAt.toISOString(),
    });
    const agentIndex = new Map(
      (await listSessionStages(tx, session.id)).flatMap((s) =>
        s.executions.map((e) => [e.id, e.agentIndex] as const),
      ),
    );
    const context = formatInvestigationContext(
      investigationOrder(await listSessionTimeline(tx, session.id), agentIndex),
    );
    const deadline = new Date(now.getTime() + locked.config.queue.chat_timeout_ms);
    await transitionStageStatus(tx, stage.id, ["pending"], "active", { startedAt: now });
    await queueStageStatus(tx, stage, "started", now);
    for (const execution of executions) {
      await enqueueOutbox(tx, "executionRequested", {
        v: 1,
        session_id: session.id,
        stage_id: stage.id,
        execution_id: execution.id,
        kind: "chat",
        agent_name: execution.agentName,
        agent_index: execution.agentIndex,
        context,
        chat: {
          chat_id: message.chat_id,
          message_id: message.message_id,
          question: userMessage.content,
        },
        deadline_at: deadline.toISOString(),
        deadline_reason: chatTimeoutReason(locked.config),
        requested_at: now.toISOString(),
      });
    }
    await enqueueOutbox(tx, "deadline", {
      v: 1,
      session_id: session.id,
      scope: "chat",
      stage_id: stage.id,
      deadline_at: deadline.toISOString(),
    });
    locked.logger.info({ session_id: session.id, stage_id: stage.id }, "chat turn started");
  });
  await deps.flushOutbox();
}

/** Records a chat turn that cannot run as a failed stage, so the user sees why. */
async function openAndFail(
  deps: SagaDeps,
  tx: Tx,
  message: ChatSubmitted,
  agent: { agentName: string; backend: string; llmProvider: string },
  reason: string,
): Promise<void> {
  const { stage, created } = await openChatTurn(tx, {
    sessionId: message.session_id,
    chatId: message.chat_id,
    messageId: message.message_id,
    stageId: message.stage_id,
    stageName: "Chat Response",
    agent,
  });
  if (!created) return;
  const now = deps.now();
  await failStageExecutions(tx, stage.id, reason, now);
  await transitionStageStatus(tx, stage.id, ["pending"], "failed", {
    completedAt: now,
    errorMessage: reason,
  });
  await queueStageStatus(tx, stage, "failed", now, reason);
  deps.metrics.stageEnded(stage, "failed", now);
}

/**
 * The one execution of a single-agent stage (a chat answer, the scoring judge) finished: the
 * stage takes its status; a chat stage also marks its chat active.
 */
export async function finishSingleAgentStage(
  deps: SagaDeps,
  tx: Tx,
  stageId: string,
): Promise<void> {
  const stage = await getStageWithExecutions(tx, stageId);
  if (!stage || (stage.status !== "pending" && stage.status !== "active")) return;
  const execution = ownExecutions(stage.executions)[0];
  if (!execution || execution.status === "pending" || execution.status === "active") return;
  const now = deps.now();
  const applied = await transitionStageStatus(
    tx,
    stage.id,
    ACTIVE_EXECUTION_STATUSES,
    execution.status,
    {
      completedAt: now,
      errorMessage: execution.errorMessage,
    },
  );
  if (applied) {
    await queueStageStatus(tx, stage, execution.status, now, execution.errorMessage);
    deps.metrics.stageEnded(stage, execution.status, now);
    if (stage.chatId !== null) await touchChat(tx, stage.chatId, now);
  }
}
