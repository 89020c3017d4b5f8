import type { Bus } from "@tarsy/bus";
import type { TarsyConfig } from "@tarsy/config";
import {
  type ExecutionFinished,
  type ExecutionRequested,
  TERMINAL_EXECUTION_STATUSES,
} from "@tarsy/contracts";
import type { LlmClient } from "@tarsy/llm-client";
import type { MaskingService } from "@tarsy/masking";
import { createMetrics, secondsSince } from "@tarsy/metrics";
import type { Logger } from "@tarsy/runtime";
import { runCompose } from "./controllers/compose.ts";
import { runFeedbackReflection } from "./controllers/feedback-reflection.ts";
import { runFunctionCalling } from "./controllers/function-calling.ts";
import { runScoring } from "./controllers/scoring.ts";
import { runExecutiveSummary, runSynthesis } from "./controllers/synthesis.ts";
import {
  abortReasonOf,
  ExecutionAbortedError,
  ExecutionNotFoundError,
  ExecutionSuspendedError,
  ExecutionTakenOverError,
} from "./errors.ts";
import { ProviderFallback } from "./llm-fallback.ts";
import { DEFAULT_LLM_RETRY_POLICY, type LlmRetryPolicy } from "./llm-retry.ts";
import { injectMemories, memoryRuntime, withMemoryTools } from "./memory.ts";
import type {
  ExecutionOutcome,
  ExecutionRecord,
  RunbookFetcher,
  RunnerStore,
  StartedAttempt,
  StoredMessage,
  StoredToolCall,
  ToolGateway,
} from "./ports.ts";
import { resolveExecutionContext } from "./resolve.ts";
import { planResume, RESUMABLE_KINDS } from "./resume.ts";
import {
  type ControllerResult,
  type RunContext,
  type RunnerMetrics,
  UsageTotals,
  WriteBehind,
} from "./run-context.ts";
import { sessionRunbook } from "./runbook.ts";
import { recordSkillsLoaded, withLoadSkill } from "./skills.ts";
import { SubAgentRuntime } from "./sub-agents.ts";
import { TimeBudget } from "./time-budget.ts";
import { Timeline } from "./timeline.ts";

export interface RunnerResources {
  config: TarsyConfig;
  store: RunnerStore;
  bus: Pick<Bus, "publish" | "publishMessage" | "publishTransient">;
  llm: Pick<LlmClient, "generate">;
  /** llm-service's Embed RPC (investigation memory); without it memory searches by keywords. */
  embedder?: Pick<LlmClient, "embed">;
  /** Retry budget, backoff and stream timeouts of LLM calls (default: DEFAULT_LLM_RETRY_POLICY). */
  llmRetry?: LlmRetryPolicy;
  tools: ToolGateway;
  /** Fetches the session's runbook URL (once per session; the text is stored on it). */
  runbooks: RunbookFetcher;
  /** Masks the runbook text like alert data. */
  masking: Pick<MaskingService, "maskAlertData">;
  logger: Logger;
  /** Stored on the execution row (which runner holds it). */
  runnerId: string;
  /** How often an active execution's heartbeat is written, default 10 s. */
  heartbeatMs?: number;
  /** Default: a registry of its own that nobody scrapes (tests). */
  metrics?: RunnerMetrics;
  /** The clock of the prompts' calendar context (default: the system clock). */
  now?: () => Date;
}

function finishedMessage(
  request: ExecutionRequested,
  outcome: ExecutionOutcome,
  finishedAt: Date,
): ExecutionFinished {
  return {
    v: 1,
    session_id: request.session_id,
    stage_id: request.stage_id,
    execution_id: request.execution_id,
    kind: request.kind,
    status: outcome.status,
    final_analysis: outcome.finalAnalysis,
    ...(outcome.actionsExecuted !== undefined && { actions_executed: outcome.actionsExecuted }),
    ...(outcome.labels !== undefined && { labels: outcome.labels }),
    ...(outcome.forcedConclusion && { forced_conclusion: outcome.forcedConclusion }),
    error: outcome.error,
    token_usage: outcome.usage,
    ...(request.parent_execution_id && { parent_execution_id: request.parent_execution_id }),
    finished_at: finishedAt.toISOString(),
  };
}

function outcomeOf(record: ExecutionRecord): ExecutionOutcome {
  return {
    status: record.status as ExecutionOutcome["status"],
    finalAnalysis: record.finalAnalysis,
    ...(record.kind === "action" && { actionsExecuted: record.actionsExecuted }),
    ...(record.kind === "executive_summary" && { labels: record.labels }),
    ...(record.forcedConclusion && { forcedConclusion: record.forcedConclusion }),
    error: record.errorMessage,
    usage: record.usage,
  };
}

/** Lists the execution's tools (recording one tool_list interaction per server). */
async function listTools(run: RunContext) {
  const { exec } = run;
  const scope = {
    sessionId: exec.sessionId,
    executionId: exec.executionId,
    servers: exec.config.mcpServers,
    toolFilters: exec.config.toolFilters,
    allowMutating: exec.config.allowMutatingTools === true,
  };
  if (scope.servers.length === 0) return { scope, tools: [] };
  const started = performance.now();
  let listed: Awaited<ReturnType<ToolGateway["listTools"]>>;
  try {
    listed = await run.tools.listTools(scope, run.signal);
  } catch (err) {
    const aborted = abortReasonOf(run.signal);
    if (aborted) throw aborted;
    // Fail-open: the agent runs without tools and is told which servers are missing.
    const reason = err instanceof Error ? err.message : String(err);
    listed = {
      tools: [],
      failedServers: Object.fromEntries(scope.servers.map((s) => [s, reason])),
    };
  }
  const durationMs = Math.round(performance.now() - started);
  exec.failedServers = listed.failedServers;
  for (const server of scope.servers) {
    const tools = listed.tools.filter((t) => t.server === server);
    run.writes.enqueue(() =>
      run.store.recordMcpInteraction({
        sessionId: exec.sessionId,
        stageId: exec.stageId,
        executionId: exec.executionId,
        interactionType: "tool_list",
        serverName: server,
        toolName: null,
        toolArguments: null,
        toolResult: null,
        availableTools: tools.map((t) => ({ name: t.name, description: t.description })),
        durationMs,
        errorMessage: listed.failedServers[server] ?? null,
      }),
    );
  }
  const mutatingTools = new Set(listed.tools.filter((t) => t.mutating).map((t) => t.name));
  const dryRunTools = new Set(
    listed.tools.filter((t) => t.mutating && t.dryRun).map((t) => t.name),
  );
  return { scope: { ...scope, mutatingTools, dryRunTools }, tools: listed.tools };
}

/** The last turn's calls without a result (none when the last turn made no calls). */
function openCallsOf(conversation: readonly StoredMessage[]): StoredToolCall[] {
  const plan = planResume(conversation);
  return plan.resumable ? plan.pendingCalls : [];
}

/**
 * Marks where an attempt took over from an interrupted one: an `execution_resumed` event with
 * what was kept and what runs again (or, when the conversation could not be continued, why the
 * execution starts over), and a log line.
 */
async function recordRecovery(timeline: Timeline, started: StartedAttempt, logger: Logger) {
  const { recovery, attempt } = started;
  if (!recovery) return;
  if (recovery.mode === "restarted") {
    logger.warn({ attempt, reason: recovery.reason }, "interrupted execution restarted");
    await timeline.create("execution_resumed", {
      status: "completed",
      content: `Started over after an interruption: ${recovery.reason}.`,
      metadata: { mode: "restarted", attempt, reason: recovery.reason },
    });
    return;
  }
  const { llmTurns, toolResults, pendingCalls } = recovery.plan;
  logger.info(
    { attempt, llm_turns: llmTurns, tool_results: toolResults, pending: pendingCalls.length },
    "interrupted execution resumed",
  );
  const again =
    pendingCalls.length > 0
      ? ` Runs again: ${pendingCalls.map((c) => c.name).join(", ")} (cut off).`
      : "";
  await timeline.create("execution_resumed", {
    status: "completed",
    content: `Resumed after an interruption: ${plural(llmTurns, "LLM turn")} and ${plural(toolResults, "tool result")} kept.${again}`,
    metadata: {
      mode: "resumed",
      attempt,
      llm_turns: llmTurns,
      tool_results: toolResults,
      pending_calls: pendingCalls.map((c) => ({ call_id: c.id, name: c.name })),
    },
  });
}

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;

async function runController(run: RunContext): Promise<ControllerResult> {
  switch (run.exec.kind) {
    case "investigation":
    case "action":
    case "chat": {
      const { scope, tools } = await listTools(run);
      // A resumed loop had its skills and lessons when it started: they are in its prompt.
      if (!run.resume) {
        await recordSkillsLoaded(run, run.exec.config.requiredSkills, "required");
        // Tier 4 for investigations and actions; a chat turn recalls with the tools instead.
        if (run.exec.kind !== "chat") run.exec.lessons = await injectMemories(run);
      }
      const withSkills = withLoadSkill(run, tools);
      const withMemory = withMemoryTools(run, withSkills.tools, withSkills.gateway);
      const orchestration = run.subAgents;
      if (!orchestration) {
        return runFunctionCalling({ ...run, tools: withMemory.gateway }, withMemory.tools, scope);
      }
      return runFunctionCalling(
        { ...run, tools: orchestration.wrap(withMemory.gateway) },
        [...orchestration.tools(), ...withMemory.tools],
        scope,
      );
    }
    case "synthesis":
      return runSynthesis(run);
    case "executive_summary":
      return runExecutiveSummary(run);
    case "scoring":
      return runScoring(run);
    case "feedback_reflection":
      return runFeedbackReflection(run);
    case "compose":
      return runCompose(run);
  }
}

/**
 * Runs one execution to its end and publishes `executionFinished`. Idempotent under
 * redelivery: a terminal execution only re-publishes its outcome; an interrupted attempt is
 * restarted from scratch (a resumption continues its stored conversation). Throws (without
 * finishing) when the runner hands the work back (shutdown) or cannot even start it, and the
 * bus then redelivers; and ExecutionSuspendedError when the execution waits for its
 * sub-agents (its request comes back, with `resume`, when one ends).
 */
export async function runExecution(
  deps: RunnerResources,
  request: ExecutionRequested,
  signal: AbortSignal,
): Promise<ExecutionFinished> {
  const logger = deps.logger.child({
    session_id: request.session_id,
    execution_id: request.execution_id,
    kind: request.kind,
    agent: request.agent_name,
  });
  const record = await deps.store.loadExecution(request.execution_id);
  // Not ours to run: no such execution, or not in the session and stage the request names.
  if (!record || record.sessionId !== request.session_id || record.stageId !== request.stage_id) {
    throw new ExecutionNotFoundError(request.execution_id);
  }
  if (TERMINAL_EXECUTION_STATUSES.includes(record.status)) {
    const finished = finishedMessage(request, outcomeOf(record), record.completedAt ?? new Date());
    await deps.bus.publish("executionFinished", finished);
    logger.info({ status: record.status }, "execution already finished; outcome re-published");
    return finished;
  }
  if ((record.suspended || record.parked) && request.resume !== true) {
    // An execution parks itself (waiting for its sub-agents or for an action's decision), then
    // its delivery is acknowledged: a runner killed in between leaves this copy behind, and it
    // may come back before or after the execution was woken. From the first parking on, only
    // resume deliveries run it (a resumed attempt that dies has its resume delivery come back):
    // starting this copy would restart or duplicate the execution beside its resumption.
    logger.info(
      { attempt: record.attempt, suspended: record.suspended },
      "execution parked (or woken from parking) earlier; this first delivery is dropped",
    );
    throw new ExecutionSuspendedError(record.id);
  }
  const started = await deps.store.startAttempt(record.id, deps.runnerId, {
    resume: request.resume === true,
    resumeInterrupted:
      deps.config.queue.resume_interrupted && RESUMABLE_KINDS.includes(request.kind),
  });
  if (!started) return runExecution(deps, request, signal);
  const timeline = new Timeline(deps.store, deps.bus, logger, {
    sessionId: record.sessionId,
    stageId: record.stageId,
    executionId: record.id,
  });
  for (const event of started.interrupted) await timeline.publishCompleted(event);
  // A restarted parent's earlier sub-agents were ended: their runners stop them.
  for (const sub of started.abandoned) {
    deps.bus.publishTransient("cancelControl", {
      v: 1,
      session_id: sub.sessionId,
      scope: "execution",
      execution_id: sub.id,
      reason: "cancelled",
      timestamp: new Date().toISOString(),
    });
  }
  const resumed = started.conversation !== undefined;
  if (started.recovery) await recordRecovery(timeline, started, logger);
  if (record.task !== null && started.attempt === 1) {
    await timeline.create("task_assigned", {
      status: "completed",
      content: record.task,
      metadata: { parent_execution_id: record.parent?.id ?? null },
    });
  }
  logger.info({ attempt: started.attempt, resumed }, "execution started");
  const startedAt = performance.now();
  const metrics = deps.metrics ?? createMetrics("agent-runner", { processMetrics: false });

  // A redelivery may hand the execution to a newer attempt: the heartbeat notices and stops us.
  const takeover = new AbortController();
  const runSignal = AbortSignal.any([signal, takeover.signal]);
  const usage = new UsageTotals();
  // A resumption goes on counting from what the earlier attempts used: as stored when the
  // parent was suspended, or (after an interruption) as its stored LLM calls add up.
  if (started.recovery?.mode === "resumed") usage.add(started.recovery.usage);
  else if (resumed) usage.add(record.usage);
  const writes = new WriteBehind((err) => logger.error({ err }, "trace record not written"));
  const heartbeat = setInterval(() => {
    deps.store.heartbeat(record.id, started.attempt).then(
      (alive) => {
        if (!alive && !takeover.signal.aborted) {
          takeover.abort(new ExecutionAbortedError("superseded"));
        }
      },
      (err: unknown) => logger.warn({ err }, "heartbeat failed"),
    );
  }, deps.heartbeatMs ?? 10_000);
  let outcome: ExecutionOutcome;
  let subAgents: SubAgentRuntime | undefined;
  try {
    // The executive summary and compose read only reports; every other prompt has the runbook.
    const runbook =
      request.kind === "executive_summary" || request.kind === "compose"
        ? null
        : await sessionRunbook({ ...deps, logger }, record, timeline, runSignal);
    const exec = resolveExecutionContext(
      deps.config,
      record,
      request,
      runbook,
      deps.now?.() ?? new Date(),
    );
    await deps.store.recordReasoningEffort(record.id, exec.config.llm.reasoningEffort ?? null);
    const run: RunContext = {
      exec,
      runnerId: deps.runnerId,
      // Always masked (even where alert masking is off), with the alert masking's patterns.
      maskForDisplay: (text) =>
        deps.masking.maskAlertData(text, {
          enabled: true,
          pattern_group: deps.config.defaults.alert_masking?.pattern_group ?? "security",
        }).content,
      parkForAction: async (actionId) => {
        const { resume: _resume, ...resumeRequest } = request;
        const outcome = await deps.store.actions.suspend({
          executionId: record.id,
          attempt: started.attempt,
          actionId,
          resumeRequest,
          usage: usage.toTokenUsage(),
        });
        if (outcome === "not_owned") throw new ExecutionTakenOverError(record.id, started.attempt);
        return outcome;
      },
      llm: deps.llm,
      llmRetry: deps.llmRetry ?? DEFAULT_LLM_RETRY_POLICY,
      fallback: new ProviderFallback(exec.config, exec.kind),
      tools: deps.tools,
      store: deps.store,
      timeline,
      logger,
      signal: runSignal,
      budget: TimeBudget.of(request.deadline_at, record.createdAt, {
        wrapUpReserveMs: deps.config.queue.wrap_up_reserve_ms,
        iterationTimeoutMs: exec.config.iterationTimeoutMs,
      }),
      usage,
      writes,
      metrics,
      memory: memoryRuntime(
        deps.config.defaults.memory,
        {
          project: record.session.project,
          alertType: record.session.alertType,
          chainId: record.session.chainId,
          sessionId: record.sessionId,
        },
        deps.embedder,
        logger,
      ),
      ...(started.conversation && {
        resume: {
          messages: started.conversation.map((m) => ({
            role: m.role,
            content: m.content,
            ...(m.toolCalls && m.toolCalls.length > 0 && { toolCalls: m.toolCalls }),
            ...(m.toolCallId !== null && { toolCallId: m.toolCallId }),
            ...(m.toolName !== null && { toolName: m.toolName }),
            ...(m.continuity && { continuity: m.continuity }),
          })),
          lastId: started.conversation.at(-1)?.id ?? null,
          ...(started.recovery?.mode === "resumed"
            ? {
                pendingCalls: started.recovery.plan.pendingCalls,
                interrupted: started.interrupted,
              }
            : {
                // Woken by an action's decision: the calls of its turn still to make.
                pendingCalls: openCallsOf(started.conversation),
              }),
        },
      }),
    };
    if (SubAgentRuntime.enabledFor(exec)) {
      subAgents = new SubAgentRuntime(
        { store: deps.store, bus: deps.bus, logger, timeline },
        exec,
        request,
        started.attempt,
      );
      run.subAgents = subAgents;
    }
    const result = await runController(run);
    outcome = {
      status: "completed",
      finalAnalysis: result.finalAnalysis,
      ...(result.actionsExecuted !== undefined && { actionsExecuted: result.actionsExecuted }),
      ...(result.labels !== undefined && { labels: result.labels }),
      ...(result.forcedConclusion && { forcedConclusion: result.forcedConclusion }),
      error: null,
      usage: usage.toTokenUsage(),
    };
  } catch (err) {
    if (err instanceof ExecutionSuspendedError) {
      // Waiting for sub-agents or an approval: nothing to finish (MCP sessions are released below).
      logger.info(
        { attempt: started.attempt, waits_for: err.waitsFor },
        err.waitsFor === "approval"
          ? "execution suspended until its action request is decided"
          : "execution suspended until a sub-agent ends",
      );
      throw err;
    }
    if (takeover.signal.aborted && !signal.aborted) {
      logger.warn({ attempt: started.attempt }, "execution taken over by a newer attempt");
      throw new ExecutionTakenOverError(record.id, started.attempt);
    }
    const aborted = abortReasonOf(signal);
    if (aborted?.reason === "shutdown" || aborted?.reason === "superseded") {
      logger.info("execution interrupted by shutdown; handing it back");
      throw aborted;
    }
    const message = err instanceof Error ? err.message : String(err);
    if (aborted) {
      outcome = {
        status: aborted.reason,
        finalAnalysis: null,
        error: aborted.message,
        usage: usage.toTokenUsage(),
      };
    } else {
      logger.warn({ err }, "execution failed");
      outcome = {
        status: "failed",
        finalAnalysis: null,
        error: message,
        usage: usage.toTokenUsage(),
      };
      await timeline
        .create("error", {
          status: "completed",
          content: message,
          metadata: { kind: "execution_failed" },
        })
        .catch((e: unknown) => logger.warn({ err: e }, "error event not written"));
    }
  } finally {
    clearInterval(heartbeat);
    await writes.drain();
    // A newer attempt uses the execution's MCP sessions now; leave them to it.
    if (!takeover.signal.aborted) {
      await deps.tools
        .release(record.id)
        .catch((err: unknown) => logger.warn({ err }, "release failed"));
    }
  }

  // A parent ends its sub-agents that are still working (their outcomes have no reader now).
  if (subAgents) {
    await subAgents
      .cancel(`cancelled: ${record.agentName} ended (${outcome.status})`)
      .catch((err: unknown) => logger.warn({ err }, "sub-agents not cancelled"));
  }
  // Final writes happen whatever stopped the loop.
  const owned = await deps.store.finishExecution(record.id, started.attempt, outcome);
  if (!owned) {
    // A redelivery gave the execution to a newer attempt; that one reports the outcome.
    logger.warn({ attempt: started.attempt }, "execution taken over by a newer attempt");
    throw new ExecutionTakenOverError(record.id, started.attempt);
  }
  metrics.executionDuration.observe(
    { agent: request.agent_name, status: outcome.status },
    secondsSince(startedAt),
  );
  const finished = finishedMessage(request, outcome, new Date());
  await deps.bus.publish("executionFinished", finished);
  logger.info({ status: outcome.status, tokens: outcome.usage.total_tokens }, "execution finished");
  return finished;
}
