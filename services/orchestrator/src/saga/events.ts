import type { SessionStatus, StageEventStatus } from "@tarsy/contracts";
import { enqueueOutbox, type Stage, type TimelineEvent, type Tx } from "@tarsy/db";

/** Queues a `session.status` event (session and global channels) in the transaction. */
export async function queueSessionStatus(
  tx: Tx,
  session: { id: string; alertType: string; chainId: string },
  status: SessionStatus,
  at: Date,
  extra: {
    currentStage?: string | null;
    error?: string | null;
    /** Who stopped the session and why (with `cancelled` and `timed_out`). */
    cancelledBy?: string | null;
    cancelReason?: string | null;
  } = {},
): Promise<void> {
  await enqueueOutbox(tx, "sessionStatus", {
    v: 1,
    type: "session.status",
    session_id: session.id,
    status,
    alert_type: session.alertType,
    chain_id: session.chainId,
    ...(extra.currentStage !== undefined && { current_stage: extra.currentStage }),
    ...(extra.error !== undefined && { error: extra.error }),
    ...(extra.cancelledBy != null && {
      cancelled_by: extra.cancelledBy,
      cancel_reason: extra.cancelReason ?? null,
    }),
    timestamp: at.toISOString(),
  });
}

/** Queues a `stage.status` event in the transaction. */
export async function queueStageStatus(
  tx: Tx,
  stage: Stage,
  status: StageEventStatus,
  at: Date,
  error: string | null = null,
): Promise<void> {
  await enqueueOutbox(tx, "stageStatus", {
    v: 1,
    type: "stage.status",
    session_id: stage.sessionId,
    stage_id: stage.id,
    stage_name: stage.stageName,
    stage_index: stage.stageIndex,
    status,
    parallel_type: stage.parallelType,
    expected_agent_count: stage.expectedAgentCount,
    chat_id: stage.chatId,
    error,
    timestamp: at.toISOString(),
  });
}

/** Queues `timeline_event.completed` for an event the orchestrator ended (a stopped execution). */
export async function queueTimelineEventCompleted(tx: Tx, event: TimelineEvent): Promise<void> {
  await enqueueOutbox(tx, "timelineEventCompleted", {
    v: 1,
    type: "timeline_event.completed",
    session_id: event.sessionId,
    stage_id: event.stageId,
    execution_id: event.executionId,
    event_id: event.id,
    event_type: event.eventType,
    status: event.status,
    content: event.content,
    metadata: (event.metadata ?? null) as Record<string, unknown> | null,
    timestamp: event.updatedAt.toISOString(),
  });
}
