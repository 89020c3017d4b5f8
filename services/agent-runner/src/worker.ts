import type { Bus, StopReport } from "@tarsy/bus";
import { CANCEL_CONTROL_WILDCARD } from "@tarsy/contracts";
import { createMetrics } from "@tarsy/metrics";
import { ActiveExecutions } from "./active.ts";
import {
  ExecutionAbortedError,
  ExecutionNotFoundError,
  ExecutionSuspendedError,
  ExecutionTakenOverError,
} from "./errors.ts";
import { type RunnerResources, runExecution } from "./execution.ts";

export interface WorkerOptions {
  /** Executions this process runs at once. */
  concurrency: number;
  /**
   * On shutdown, how long running executions may continue before they are aborted and handed
   * back for redelivery to another runner.
   */
  shutdownGraceMs: number;
}

export interface RunnerWorker {
  /** Executions running now. */
  active(): number;
  /** Stops pulling; lets running executions finish within the grace period, hands back the rest. */
  stop(): Promise<StopReport>;
}

/**
 * Pulls execution requests from the shared durable consumer (in-progress acks keep long
 * executions from being redelivered) and listens for cancels of the sessions it runs.
 */
export async function startWorker(
  deps: RunnerResources & { bus: Bus },
  options: WorkerOptions,
): Promise<RunnerWorker> {
  const active = new ActiveExecutions();
  const log = deps.logger.child({ component: "worker" });
  const metrics = deps.metrics ?? createMetrics("agent-runner", { processMetrics: false });
  const cancels = deps.bus.subscribeTransient(
    "cancelControl",
    CANCEL_CONTROL_WILDCARD,
    (control) => {
      const aborted = active.cancel(control);
      if (aborted > 0) {
        log.info(
          { session_id: control.session_id, reason: control.reason, aborted },
          "cancel received",
        );
      }
    },
  );

  const consumer = await deps.bus.consume(
    "runner",
    {
      executionRequested: async (request, ctx) => {
        const controller = active.add(request.execution_id, request.session_id, request.stage_id);
        const timers: NodeJS.Timeout[] = [];
        if (request.deadline_at) {
          const ms = Date.parse(request.deadline_at) - Date.now();
          timers.push(
            setTimeout(
              () =>
                controller.abort(new ExecutionAbortedError("timed_out", request.deadline_reason)),
              Math.max(0, ms),
            ),
          );
        }
        const onStop = () => {
          timers.push(
            setTimeout(
              () => controller.abort(new ExecutionAbortedError("shutdown")),
              options.shutdownGraceMs,
            ),
          );
        };
        if (ctx.signal.aborted) onStop();
        else ctx.signal.addEventListener("abort", onStop, { once: true });
        // Long LLM calls: tell the server we are alive more often than the periodic ack.
        const working = setInterval(() => ctx.working(), 5_000);
        try {
          await runExecution(deps, request, controller.signal);
        } catch (err) {
          if (err instanceof ExecutionNotFoundError) {
            // Nothing to run and nobody to report to: acknowledged and dropped, not retried.
            log.warn(
              {
                subject: ctx.subject,
                kind: "execution_requested",
                missing: "execution",
                missing_id: request.execution_id,
                session_id: request.session_id,
              },
              "work message names a missing execution; dropped",
            );
            metrics.workOrphaned.inc({ kind: "execution_requested", missing: "execution" });
            return;
          }
          // Waiting for sub-agents with the slot freed: this delivery is done.
          if (err instanceof ExecutionSuspendedError) return;
          // The newer attempt holds the execution and reports it; this delivery is done.
          if (!(err instanceof ExecutionTakenOverError)) throw err;
          log.warn({ execution_id: request.execution_id }, err.message);
        } finally {
          clearInterval(working);
          for (const timer of timers) clearTimeout(timer);
          ctx.signal.removeEventListener("abort", onStop);
          active.remove(request.execution_id);
        }
      },
    },
    { concurrency: options.concurrency, stopTimeoutMs: options.shutdownGraceMs + 5_000 },
  );

  return {
    active: () => active.size,
    async stop() {
      const report = await consumer.stop();
      cancels.unsubscribe();
      return report;
    },
  };
}
