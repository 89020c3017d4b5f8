import type { ConsumerHandlers } from "@tarsy/bus";
import { ACTIVE_EXECUTION_STATUSES, normalizeCancelReason } from "@tarsy/contracts";
import {
  getSessionExecution,
  getSessionStage,
  labelsColumn,
  refreshSessionTokens,
  resumeSuspendedExecution,
  type Tx,
  transitionExecutionStatus,
} from "@tarsy/db";
import { admitAndStart, startSession } from "./admission.ts";
import { stopSession } from "./cancel.ts";
import { stepChain } from "./chain.ts";
import { finishSingleAgentStage, startChatTurn } from "./chat.ts";
import type { SagaDeps } from "./deps.ts";
import { endFeedbackReflection, startFeedbackReflection } from "./feedback-reflection.ts";
import { assertRowIds, OrphanedWorkError } from "./orphans.ts";
import { finishScoring, startRequestedScore } from "./scoring.ts";
import { withSession } from "./session-lock.ts";
import { chatTimeoutReason, sessionTimeoutReason } from "./timeouts.ts";

/**
 * The orchestrator's handler for every work message addressed to it. Each first checks that
 * the message's ids can name rows; a message about something missing throws
 * OrphanedWorkError (or SessionNotFoundError), which the consumer's `drop` option
 * (`dropOrphans`) acknowledges and drops instead of retrying it into the dead letters.
 */
export function orchestratorHandlers(deps: SagaDeps): ConsumerHandlers<"orchestrator"> {
  return {
    async sessionSubmitted(message) {
      assertRowIds(message);
      await admitAndStart(deps);
      // A redelivery after a crash between admission and start finishes the start.
      await startSession(deps, message.session_id);
    },

    async executionFinished(message) {
      assertRowIds(message);
      let sessionTerminal = false;
      await withSession(deps, message.session_id, async (tx, session, locked) => {
        const execution = await getSessionExecution(tx, session.id, message.execution_id);
        if (!execution) throw new OrphanedWorkError("execution", message.execution_id);
        if (message.stage_id !== null && execution.stageId !== message.stage_id) {
          throw new OrphanedWorkError("stage", message.stage_id);
        }
        const now = locked.now();
        await transitionExecutionStatus(
          tx,
          message.execution_id,
          ACTIVE_EXECUTION_STATUSES,
          message.status,
          {
            completedAt: now,
            finalAnalysis: message.final_analysis,
            ...(message.actions_executed !== undefined && {
              actionsExecuted: message.actions_executed,
            }),
            ...(message.labels !== undefined && { labels: labelsColumn(message.labels) }),
            ...(message.forced_conclusion && { forcedConclusion: message.forced_conclusion }),
            errorMessage: message.error,
            ...(message.token_usage && {
              inputTokens: message.token_usage.input_tokens,
              outputTokens: message.token_usage.output_tokens,
              thinkingTokens: message.token_usage.thinking_tokens ?? 0,
              totalTokens: message.token_usage.total_tokens,
            }),
          },
        );
        await refreshSessionTokens(tx, message.session_id);
        if (execution.parentExecutionId !== null) {
          // A sub-agent: its outcome goes to its parent, which resumes if it was waiting.
          await resumeIfSuspended(locked, tx, execution.parentExecutionId);
          return;
        }
        if (message.kind === "chat") {
          if (message.stage_id) await finishSingleAgentStage(locked, tx, message.stage_id);
          return;
        }
        if (message.kind === "feedback_reflection") {
          // Fail-open: the reflector's outcome is its reflection's alone.
          await endFeedbackReflection(locked, tx, message);
          return;
        }
        if (message.kind === "scoring") {
          // Fail-open: the judge's outcome never touches the session's own status.
          if (message.stage_id) {
            await finishScoring(locked, tx, message.stage_id, {
              status: message.status,
              errorMessage: message.error,
            });
          }
          return;
        }
        sessionTerminal = (await stepChain(locked, tx, session)).sessionTerminal;
      });
      await deps.flushOutbox();
      if (sessionTerminal) await admitAndStart(deps);
    },

    async cancelRequested(message) {
      assertRowIds(message);
      await stopSession(
        deps,
        message.session_id,
        "cancelled",
        `cancelled by ${message.requested_by}`,
        undefined,
        { actor: message.requested_by, reason: normalizeCancelReason(message.reason) },
      );
    },

    async deadline(message, ctx) {
      assertRowIds(message);
      const remaining = new Date(message.deadline_at).getTime() - deps.now().getTime();
      if (remaining > 0) {
        ctx.retryLater(remaining);
        return;
      }
      if (message.scope === "wrap_up") {
        // An orchestrating agent's wrap-up began: if it still waits for its sub-agents, it is
        // resumed to conclude (a running one checks its time itself).
        const executionId = message.execution_id as string;
        await withSession(deps, message.session_id, async (tx, _session, locked) => {
          await resumeIfSuspended(locked, tx, executionId);
        });
        await deps.flushOutbox();
        return;
      }
      if (message.scope === "session") {
        const why = sessionTimeoutReason(deps.config);
        await stopSession(deps, message.session_id, "timed_out", why, {
          session: true,
        });
      } else {
        if (message.stage_id !== undefined) {
          const stage = await getSessionStage(deps.db, message.session_id, message.stage_id);
          if (!stage) throw new OrphanedWorkError("stage", message.stage_id);
        }
        const why = chatTimeoutReason(deps.config);
        await stopSession(deps, message.session_id, "timed_out", why, {
          session: false,
          chatStageId: message.stage_id ?? "any",
        });
      }
    },

    async chatSubmitted(message) {
      assertRowIds(message);
      await startChatTurn(deps, message);
    },

    async scoreRequested(message) {
      assertRowIds(message);
      await startRequestedScore(deps, message);
    },

    async feedbackSubmitted(message) {
      assertRowIds(message);
      await startFeedbackReflection(deps, message);
    },
  };
}

/**
 * Takes a suspended execution out of suspension and republishes the request that resumes it
 * (any runner continues its stored conversation); nothing when it is not suspended.
 */
async function resumeIfSuspended(
  locked: Pick<SagaDeps, "now" | "logger">,
  tx: Tx,
  executionId: string,
): Promise<void> {
  const resume = await resumeSuspendedExecution(tx, executionId, locked.now());
  if (resume === "invalid") {
    locked.logger.error(
      { execution_id: executionId },
      "suspended execution has no valid resume request; it stays until its deadline",
    );
  }
}
