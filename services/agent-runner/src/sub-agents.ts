import type { Bus } from "@tarsy/bus";
import { formatDuration } from "@tarsy/config";
import { type ExecutionRequested, TERMINAL_EXECUTION_STATUSES } from "@tarsy/contracts";
import type { Logger } from "@tarsy/runtime";
import { z } from "zod";
import type { Conversation } from "./conversation.ts";
import { ExecutionTakenOverError } from "./errors.ts";
import type { ExecutionContext } from "./execution-context.ts";
import type {
  RunnerStore,
  SubAgentRecord,
  ToolCallResult,
  ToolDefinition,
  ToolGateway,
} from "./ports.ts";
import { subAgentResultMessage } from "./prompts/sub-agents.ts";
import type { UsageTotals } from "./run-context.ts";
import type { TimeBudget } from "./time-budget.ts";
import type { Timeline } from "./timeline.ts";

/**
 * Sub-agents in the runner. An agent with a non-empty catalog gets three tools the runner
 * answers itself: `dispatch_agent` creates a sub-agent execution and puts its request on
 * TARSY_WORK (any runner runs it), `cancel_agent` ends one, `list_agents` lists them. Their
 * outcomes come back as user messages before the parent's next LLM call. A parent with
 * nothing to do but wait is suspended: its runner slot is freed, and the orchestrator
 * republishes its request (`resume`) when the next sub-agent ends.
 */

export const DISPATCH_AGENT_TOOL = "dispatch_agent";
export const CANCEL_AGENT_TOOL = "cancel_agent";
export const LIST_AGENTS_TOOL = "list_agents";
const ORCHESTRATION_TOOLS = new Set([DISPATCH_AGENT_TOOL, CANCEL_AGENT_TOOL, LIST_AGENTS_TOOL]);

const MAX_REASON_LENGTH = 500;

const DispatchArgsSchema = z.object({
  name: z.string().trim().min(1, "name the agent to dispatch"),
  task: z.string().trim().min(1, "describe the task"),
});
const CancelArgsSchema = z.object({
  execution_id: z.string().trim().min(1, "give the execution_id dispatch_agent returned"),
  reason: z.string().max(MAX_REASON_LENGTH).optional(),
});

function definitions(catalog: readonly { name: string }[]): ToolDefinition[] {
  const tool = (name: string, description: string, inputSchema: Record<string, unknown>) => ({
    name,
    server: "",
    tool: name,
    description,
    inputSchema,
  });
  return [
    tool(
      DISPATCH_AGENT_TOOL,
      "Dispatch a sub-agent with a task. Returns at once with its execution_id; its result is delivered to you automatically when it finishes.",
      {
        type: "object",
        properties: {
          name: {
            type: "string",
            enum: catalog.map((a) => a.name),
            description: "The sub-agent to dispatch (see Available Sub-Agents)",
          },
          task: {
            type: "string",
            description: "What the sub-agent should do, with the context it needs",
          },
        },
        required: ["name", "task"],
      },
    ),
    tool(CANCEL_AGENT_TOOL, "Cancel a running sub-agent you dispatched.", {
      type: "object",
      properties: {
        execution_id: { type: "string", description: "The execution_id dispatch_agent returned" },
        reason: { type: "string", description: "Why (optional, at most 500 characters)" },
      },
      required: ["execution_id"],
    }),
    tool(LIST_AGENTS_TOOL, "List the sub-agents you dispatched and their status.", {
      type: "object",
      properties: {},
    }),
  ];
}

function parseJson(raw: string): unknown {
  if (raw.trim() === "") return {};
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function problemsOf(error: z.ZodError): string {
  return error.issues
    .map((i) => (i.path.length > 0 ? `${i.path.join(".")}: ${i.message}` : i.message))
    .join("; ");
}

const isTerminal = (s: SubAgentRecord) => TERMINAL_EXECUTION_STATUSES.includes(s.status);

export interface SubAgentDeps {
  store: RunnerStore;
  bus: Pick<Bus, "publish" | "publishTransient">;
  logger: Logger;
  timeline: Timeline;
}

export class SubAgentRuntime {
  constructor(
    private readonly deps: SubAgentDeps,
    private readonly exec: ExecutionContext,
    /** The parent's own request (its deadline; republished to resume it). */
    private readonly request: ExecutionRequested,
    private readonly attempt: number,
  ) {}

  /** The orchestration tools (only for an agent with a catalog; never for a sub-agent). */
  static enabledFor(exec: ExecutionContext): boolean {
    return exec.config.subAgents.length > 0 && exec.subAgent === undefined;
  }

  tools(): ToolDefinition[] {
    return definitions(this.exec.config.subAgents);
  }

  /** `inner` with the orchestration tools answered in-process. */
  wrap(inner: ToolGateway): ToolGateway {
    return {
      listTools: (scope, signal) => inner.listTools(scope, signal),
      release: (executionId) => inner.release(executionId),
      callTool: async (scope, call, signal): Promise<ToolCallResult> => {
        if (!ORCHESTRATION_TOOLS.has(call.name)) return inner.callTool(scope, call, signal);
        const started = performance.now();
        const parsed = parseJson(call.arguments);
        let answer: { content: string; isError: boolean };
        if (call.name === DISPATCH_AGENT_TOOL) answer = await this.dispatch(call.callId, parsed);
        else if (call.name === CANCEL_AGENT_TOOL) answer = await this.cancelOne(parsed);
        else answer = await this.list();
        return {
          server: "",
          tool: call.name,
          arguments: asRecord(parsed),
          content: answer.content,
          isError: answer.isError,
          source: "tarsy",
          durationMs: Math.round(performance.now() - started),
        };
      },
    };
  }

  private async dispatch(
    callId: string,
    raw: unknown,
  ): Promise<{ content: string; isError: boolean }> {
    const args = DispatchArgsSchema.safeParse(raw);
    if (!args.success) {
      return {
        content: `Invalid arguments for dispatch_agent (expected {"name", "task"}): ${raw === undefined ? "not JSON" : problemsOf(args.error)}`,
        isError: true,
      };
    }
    const catalog = this.exec.config.subAgents;
    if (!catalog.some((a) => a.name === args.data.name)) {
      return {
        content: `Unknown sub-agent "${args.data.name}". Available: ${catalog.map((a) => a.name).join(", ")}.`,
        isError: true,
      };
    }
    const limits = this.exec.config.orchestrator;
    const now = Date.now();
    const deadlines: { at: number; reason: string }[] = [];
    if (this.request.deadline_at) {
      deadlines.push({
        at: Date.parse(this.request.deadline_at),
        reason: this.request.deadline_reason ?? "the parent's deadline passed",
      });
    }
    if (limits.agent_timeout_ms !== undefined) {
      deadlines.push({
        at: now + limits.agent_timeout_ms,
        reason: `sub-agent timed out after ${formatDuration(limits.agent_timeout_ms)} (orchestrator.agent_timeout)`,
      });
    }
    if (limits.max_budget_ms !== undefined) {
      const earlier = await this.deps.store.subAgents.list(this.exec.executionId);
      const first = earlier[0]?.createdAt.getTime() ?? now;
      const end = first + limits.max_budget_ms;
      const budget = `the sub-agents' total budget of ${formatDuration(limits.max_budget_ms)} is spent (orchestrator.max_budget)`;
      if (now >= end) {
        return { content: `Not dispatched: ${budget}.`, isError: true };
      }
      deadlines.push({ at: end, reason: budget });
    }
    const result = await this.deps.store.subAgents.dispatch({
      parentExecutionId: this.exec.executionId,
      agentName: args.data.name,
      kind: "investigation",
      task: args.data.task,
      dispatchKey: callId,
      maxConcurrent: limits.max_concurrent_agents,
    });
    if (result.status === "refused") {
      return {
        content: `Not dispatched: ${result.reason}. Wait for a result or cancel one first.`,
        isError: true,
      };
    }
    const sub = result.subAgent;
    if (!isTerminal(sub)) {
      const deadline = deadlines.sort((a, b) => a.at - b.at)[0];
      await this.deps.bus.publish("executionRequested", {
        v: 1,
        session_id: sub.sessionId,
        stage_id: sub.stageId,
        execution_id: sub.id,
        kind: sub.kind,
        agent_name: sub.agentName,
        agent_index: sub.agentIndex,
        parent_execution_id: this.exec.executionId,
        task: args.data.task,
        ...(deadline && {
          deadline_at: new Date(deadline.at).toISOString(),
          deadline_reason: deadline.reason,
        }),
        requested_at: new Date().toISOString(),
      });
    }
    this.deps.logger.info(
      { sub_agent_execution_id: sub.id, agent: sub.agentName, status: result.status },
      "sub-agent dispatched",
    );
    return {
      content: JSON.stringify({
        execution_id: sub.id,
        status: "accepted",
        note: "The sub-agent is working. Its result will be delivered to you automatically when it finishes: do not invent or predict it.",
      }),
      isError: false,
    };
  }

  private async cancelOne(raw: unknown): Promise<{ content: string; isError: boolean }> {
    const args = CancelArgsSchema.safeParse(raw);
    if (!args.success) {
      return {
        content: `Invalid arguments for cancel_agent (expected {"execution_id", "reason"?}): ${raw === undefined ? "not JSON" : problemsOf(args.error)}`,
        isError: true,
      };
    }
    const id = args.data.execution_id;
    const mine = (await this.deps.store.subAgents.list(this.exec.executionId)).find(
      (s) => s.id === id,
    );
    if (!mine)
      return { content: JSON.stringify({ execution_id: id, status: "not_found" }), isError: true };
    if (isTerminal(mine)) {
      return {
        content: JSON.stringify({
          execution_id: id,
          status: "already_completed",
          outcome: mine.status,
        }),
        isError: false,
      };
    }
    const reason = args.data.reason?.trim();
    const ended = await this.cancel(
      `Cancelled by ${this.exec.agentName}${reason ? `: ${reason}` : ""}`,
      [id],
    );
    return {
      content: JSON.stringify({
        execution_id: id,
        status: ended.length > 0 ? "cancelled" : "already_completed",
      }),
      isError: false,
    };
  }

  private async list(): Promise<{ content: string; isError: boolean }> {
    const subs = await this.deps.store.subAgents.list(this.exec.executionId);
    return {
      content: JSON.stringify(
        subs.map((s) => ({
          execution_id: s.id,
          name: s.agentName,
          task: s.task,
          status: s.status,
          ...(s.errorMessage && { error: s.errorMessage }),
        })),
      ),
      isError: false,
    };
  }

  /** Ends unfinished sub-agents (all, or `only`) and tells their runners to stop. */
  async cancel(reason: string, only?: readonly string[]): Promise<SubAgentRecord[]> {
    const ended = await this.deps.store.subAgents.cancel(this.exec.executionId, reason, only);
    for (const sub of ended) {
      this.deps.bus.publishTransient("cancelControl", {
        v: 1,
        session_id: sub.sessionId,
        scope: "execution",
        execution_id: sub.id,
        reason: "cancelled",
        timestamp: new Date().toISOString(),
      });
    }
    return ended;
  }

  /**
   * Gives the parent the outcomes of sub-agents that ended since its last look: one user
   * message each (stored with the next flush, which marks them delivered) and a
   * `sub_agent_result` event. Returns how many.
   */
  async deliver(conversation: Conversation): Promise<number> {
    const ended = await this.deps.store.subAgents.undelivered(this.exec.executionId);
    for (const sub of ended) {
      const outcome = {
        executionId: sub.id,
        agentName: sub.agentName,
        status: sub.status,
        finalAnalysis: sub.finalAnalysis,
        errorMessage: sub.errorMessage,
        forcedConclusion: sub.forcedConclusion,
      };
      const content = subAgentResultMessage(outcome);
      await this.deps.timeline.create("sub_agent_result", {
        status: "completed",
        content: subAgentResultMessage(outcome, { fenced: false }),
        metadata: {
          sub_agent_execution_id: sub.id,
          agent_name: sub.agentName,
          status: sub.status,
          ...(sub.forcedConclusion && { forced_conclusion: sub.forcedConclusion }),
        },
      });
      conversation.append({ role: "user", content }, sub.id);
    }
    return ended.length;
  }

  /** Whether a sub-agent is still running, or ended without its outcome delivered. */
  async pending(): Promise<boolean> {
    const subs = await this.deps.store.subAgents.list(this.exec.executionId);
    return (
      subs.some((s) => !isTerminal(s)) ||
      (await this.deps.store.subAgents.undelivered(this.exec.executionId)).length > 0
    );
  }

  /**
   * The parent has nothing to do but wait: suspend it unless an outcome is already there.
   * `suspended` means the caller must stop without finishing the execution.
   */
  async waitOrSuspend(
    conversation: Conversation,
    usage: UsageTotals,
    budget: TimeBudget,
  ): Promise<"suspended" | "continue"> {
    await conversation.flush();
    // Out of time to wait: the loop goes on to its forced conclusion.
    if (budget.mustWrapUp()) return "continue";
    const { resume: _resume, ...request } = this.request;
    const wrapUpAt = budget.wrapUpAt();
    if (wrapUpAt !== null) {
      // The orchestrator resumes a parent still suspended when its wrap-up begins. Sent before
      // the suspension, so that no crash leaves a suspended parent without it; it does nothing
      // to a parent that is not suspended by then.
      await this.deps.bus.publish("deadline", {
        v: 1,
        session_id: this.exec.sessionId,
        scope: "wrap_up",
        ...(this.exec.stageId !== null && { stage_id: this.exec.stageId }),
        execution_id: this.exec.executionId,
        deadline_at: new Date(wrapUpAt).toISOString(),
      });
    }
    const outcome = await this.deps.store.subAgents.suspend(
      this.exec.executionId,
      this.attempt,
      request,
      usage.toTokenUsage(),
    );
    if (outcome === "not_owned") {
      throw new ExecutionTakenOverError(this.exec.executionId, this.attempt);
    }
    if (outcome !== "suspended") return "continue";
    if (budget.mustWrapUp() && (await this.deps.store.subAgents.wake(this.exec.executionId))) {
      // The wrap-up began while it suspended (its resume may have found it still running):
      // it takes itself out again and concludes.
      return "continue";
    }
    this.deps.logger.info("waiting for sub-agents: execution suspended, runner slot freed");
    return "suspended";
  }
}
