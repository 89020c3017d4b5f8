/**
 * Action requests (issue #30): every mutating tool call of an action agent. The runner
 * requests one (approved at once when the agent's `approval` is `auto`) and, while it is
 * pending, parks its execution with no runner holding it. A person's decision, or the
 * request's timeout, wakes the execution through the outbox. mcp-gateway claims an approved
 * request before it sends the call (the row's id is the call's idempotency key), and records
 * its end: a request whose call started and never ended is "outcome unknown", never repeated.
 * Every step writes a row of the append-only `action_audit` and an `action.status` event.
 *
 * Locks: the execution's row first, then the request's, on every path that can park or wake.
 */
import {
  ACTIVE_EXECUTION_STATUSES,
  type Action,
  type ActionAuditEntry,
  type ActionAuditEvent,
  type ActionCallStatus,
  type ActionStatus,
  type ApprovalMode,
  ExecutionRequestedSchema,
  type TokenUsage,
} from "@tarsy/contracts";
import { type DbClient, inTransaction, type Tx } from "./client.ts";
import type { ActionRequest, Prisma } from "./generated/prisma/client.ts";
import { enqueueOutbox, type OutboxEntry } from "./outbox.ts";

export type { ActionRequest } from "./generated/prisma/client.ts";

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

/** What a request's view shows of its session. */
export interface ActionSessionFacts {
  project: string;
  alertType: string;
}

/** A request with its session's facts, as the lists and look-ups return it. */
export type ActionWithSession = ActionRequest & { session: ActionSessionFacts };

const SESSION_FACTS = { session: { select: { project: true, alertType: true } } } as const;

/** A request as the API, the CLI and the `action.status` event show it. */
export function actionView(row: ActionRequest, session: ActionSessionFacts): Action {
  return {
    id: row.id,
    session_id: row.sessionId,
    project: session.project,
    alert_type: session.alertType,
    stage_id: row.stageId,
    execution_id: row.executionId,
    agent_name: row.agentName,
    tool_call_id: row.toolCallId,
    tool_name: row.toolName,
    server: row.server,
    tool: row.tool,
    arguments: (row.arguments ?? {}) as Record<string, unknown>,
    reason: row.reason,
    approval_mode: row.approvalMode as ApprovalMode,
    status: row.status,
    requested_by: row.requestedBy,
    requested_at: row.requestedAt.toISOString(),
    expires_at: iso(row.expiresAt),
    decided_by: row.decidedBy,
    decided_at: iso(row.decidedAt),
    comment: row.comment,
    call_status: row.callStatus,
    call_started_at: iso(row.callStartedAt),
    call_ended_at: iso(row.callEndedAt),
    result: row.result,
    dry_run:
      row.dryRunStatus === "succeeded" || row.dryRunStatus === "failed"
        ? { status: row.dryRunStatus, result: row.dryRunResult ?? "" }
        : null,
  };
}

async function lockExecution(tx: Tx, id: string): Promise<void> {
  await tx.$queryRaw`SELECT id FROM agent_executions WHERE id = ${id}::uuid FOR UPDATE`;
}

/** One audit row and the request's `action.status` event, in the caller's transaction. */
async function record(
  tx: Tx,
  row: ActionRequest,
  event: ActionAuditEvent,
  actor: string,
  detail: Record<string, unknown> | null,
  at: Date,
): Promise<OutboxEntry<"actionStatus">> {
  await tx.actionAuditEntry.create({
    data: {
      at,
      actionId: row.id,
      sessionId: row.sessionId,
      executionId: row.executionId,
      agentName: row.agentName,
      toolName: row.toolName,
      event,
      actor,
      ...(detail === null ? {} : { detail: detail as Prisma.InputJsonObject }),
    },
  });
  const session = await tx.alertSession.findUniqueOrThrow({
    where: { id: row.sessionId },
    select: { project: true, alertType: true },
  });
  return enqueueOutbox(tx, "actionStatus", {
    v: 1,
    type: "action.status",
    session_id: row.sessionId,
    action: actionView(row, session),
    timestamp: at.toISOString(),
  });
}

export interface NewActionRequest {
  sessionId: string;
  stageId: string | null;
  executionId: string;
  agentName: string;
  toolCallId: string;
  server: string;
  tool: string;
  rawArguments: string;
  /** Parsed and masked. */
  arguments: Record<string, unknown>;
  /** Masked. */
  reason: string;
  approvalMode: ApprovalMode;
  /** Null: no timeout. */
  expiresAt: Date | null;
  /** The call's dry-run form's outcome (masked), when it has one. */
  dryRun?: { status: "succeeded" | "failed"; result: string } | null;
  at: Date;
}

export interface RequestedAction {
  action: ActionRequest;
  /** False when the call already had its request (a resumed or repeated attempt). */
  created: boolean;
  events: OutboxEntry[];
}

/**
 * The request of one mutating call, created once per (execution, tool call id): a repeat
 * returns the stored one as it stands. `auto` requests are approved at once by the policy.
 */
export function requestAction(client: DbClient, input: NewActionRequest): Promise<RequestedAction> {
  return inTransaction(client, async (tx) => {
    await lockExecution(tx, input.executionId);
    const existing = await tx.actionRequest.findUnique({
      where: {
        executionId_toolCallId: { executionId: input.executionId, toolCallId: input.toolCallId },
      },
    });
    if (existing) return { action: existing, created: false, events: [] };
    const session = await tx.alertSession.findUnique({
      where: { id: input.sessionId },
      select: { author: true },
    });
    const auto = input.approvalMode === "auto";
    const requested = await tx.actionRequest.create({
      data: {
        sessionId: input.sessionId,
        stageId: input.stageId,
        executionId: input.executionId,
        agentName: input.agentName,
        toolCallId: input.toolCallId,
        toolName: `${input.server}.${input.tool}`,
        server: input.server,
        tool: input.tool,
        rawArguments: input.rawArguments,
        arguments: input.arguments as Prisma.InputJsonObject,
        reason: input.reason,
        approvalMode: input.approvalMode,
        requestedBy: session?.author ?? null,
        requestedAt: input.at,
        expiresAt: auto ? null : input.expiresAt,
        ...(input.dryRun && {
          dryRunStatus: input.dryRun.status,
          dryRunResult: input.dryRun.result,
        }),
      },
    });
    const events = [
      await record(
        tx,
        requested,
        "requested",
        `agent:${input.agentName}`,
        {
          arguments: input.arguments,
          reason: input.reason,
          approval_mode: input.approvalMode,
          ...(input.dryRun && { dry_run: input.dryRun }),
        },
        input.at,
      ),
    ];
    if (!auto) return { action: requested, created: true, events };
    const approved = await tx.actionRequest.update({
      where: { id: requested.id },
      data: { status: "approved", decidedBy: AUTO_APPROVER, decidedAt: input.at },
    });
    events.push(await record(tx, approved, "approved", AUTO_APPROVER, null, input.at));
    return { action: approved, created: true, events };
  });
}

/** Who approves the calls of an agent whose `approval` is `auto`. */
export const AUTO_APPROVER = "policy:auto";
/** Who decides a request nobody decided before its timeout. */
export const TIMEOUT_DECIDER = "timeout";

export type ActionSuspendOutcome = "suspended" | "decided" | "not_owned";

/**
 * Parks the execution until its pending request is decided: no runner holds it; the decision
 * wakes it with `resumeRequest`. "decided" when the decision came first (go on at once).
 */
export function suspendForAction(
  client: DbClient,
  input: {
    executionId: string;
    attempt: number;
    actionId: string;
    resumeRequest: Prisma.InputJsonObject;
    usage: TokenUsage;
  },
): Promise<ActionSuspendOutcome> {
  return inTransaction(client, async (tx) => {
    await lockExecution(tx, input.executionId);
    const row = await tx.agentExecution.findUnique({ where: { id: input.executionId } });
    if (!row || row.status !== "active" || row.attempt !== input.attempt) return "not_owned";
    const action = await tx.actionRequest.findUnique({ where: { id: input.actionId } });
    if (!action || action.status !== "pending") return "decided";
    await tx.agentExecution.update({
      where: { id: input.executionId },
      data: {
        suspendedAt: new Date(),
        resumeRequest: input.resumeRequest,
        inputTokens: input.usage.input_tokens,
        outputTokens: input.usage.output_tokens,
        thinkingTokens: input.usage.thinking_tokens ?? 0,
        totalTokens: input.usage.total_tokens,
      },
    });
    return "suspended";
  });
}

/**
 * Takes a suspended execution out of suspension and queues the work message that resumes it
 * (any runner continues its stored conversation). Null when it was not suspended; "invalid"
 * when its stored resume request cannot be read (it stays until its deadline).
 */
export async function resumeSuspendedExecution(
  tx: Tx,
  executionId: string,
  at: Date,
): Promise<OutboxEntry<"executionRequested"> | null | "invalid"> {
  await lockExecution(tx, executionId);
  const row = await tx.agentExecution.findUnique({ where: { id: executionId } });
  if (!row || row.status !== "active" || row.suspendedAt === null) return null;
  await tx.agentExecution.update({ where: { id: executionId }, data: { suspendedAt: null } });
  const parsed = ExecutionRequestedSchema.safeParse(row.resumeRequest);
  if (!parsed.success) return "invalid";
  return enqueueOutbox(tx, "executionRequested", {
    ...parsed.data,
    resume: true,
    requested_at: at.toISOString(),
  });
}

export interface ActionDecision {
  status: Extract<ActionStatus, "approved" | "denied" | "expired" | "cancelled">;
  actor: string;
  comment?: string | null;
  /** Four eyes: the approver may not be whoever submitted the alert. */
  fourEyes?: boolean;
  at: Date;
}

export type DecideResult =
  | { outcome: "not_found" }
  | { outcome: "already_decided"; action: ActionRequest }
  | { outcome: "four_eyes"; action: ActionRequest }
  | {
      outcome: "decided";
      action: ActionRequest;
      events: OutboxEntry[];
      /** Its execution's stored resume request could not be read (it waits for its deadline). */
      resumeInvalid: boolean;
    };

/**
 * Decides a pending request (a compare-and-swap: only once), writes its audit row and event,
 * and wakes its execution. A request whose execution ended meanwhile becomes `cancelled`.
 */
export async function decideAction(
  client: DbClient,
  id: string,
  decision: ActionDecision,
): Promise<DecideResult> {
  const found = await client.actionRequest.findUnique({
    where: { id },
    select: { executionId: true },
  });
  if (!found) return { outcome: "not_found" };
  return inTransaction(client, async (tx) => {
    await lockExecution(tx, found.executionId);
    const action = await tx.actionRequest.findUnique({ where: { id } });
    if (!action) return { outcome: "not_found" };
    if (action.status !== "pending") return { outcome: "already_decided", action };
    const execution = await tx.agentExecution.findUnique({
      where: { id: action.executionId },
      select: { status: true },
    });
    const ended = !execution || !ACTIVE_EXECUTION_STATUSES.includes(execution.status);
    if (
      !ended &&
      decision.fourEyes === true &&
      decision.status === "approved" &&
      action.requestedBy !== null &&
      action.requestedBy === decision.actor
    ) {
      return { outcome: "four_eyes", action };
    }
    const status = ended ? "cancelled" : decision.status;
    const actor = ended ? "system" : decision.actor;
    const comment = ended ? "its execution ended before the decision" : (decision.comment ?? null);
    const decided = await tx.actionRequest.update({
      where: { id },
      data: { status, decidedBy: actor, decidedAt: decision.at, comment },
    });
    const events: OutboxEntry[] = [
      await record(tx, decided, status, actor, comment ? { comment } : null, decision.at),
    ];
    if (ended) return { outcome: "already_decided", action: decided };
    const resume = await resumeSuspendedExecution(tx, action.executionId, decision.at);
    if (resume !== null && resume !== "invalid") events.push(resume);
    return { outcome: "decided", action: decided, events, resumeInvalid: resume === "invalid" };
  });
}

/** Who ends the pending requests of an execution that restarted from scratch. */
export const RESTART_DECIDER = "system";
export const RESTART_COMMENT =
  "its execution restarted from scratch: the new attempt asks again if it still needs the call";

/**
 * An execution restarted from scratch (its conversation was not resumed): the requests its
 * earlier attempt left pending can no longer be answered, so they are cancelled at once rather
 * than left to their timeout. Returns their events (the audit rows are written).
 */
export function abandonActionRequests(
  client: DbClient,
  executionId: string,
  at: Date,
): Promise<OutboxEntry[]> {
  return inTransaction(client, async (tx) => {
    await lockExecution(tx, executionId);
    const pending = await tx.actionRequest.findMany({
      where: { executionId, status: "pending" },
      orderBy: { requestedAt: "asc" },
    });
    const events: OutboxEntry[] = [];
    for (const action of pending) {
      const cancelled = await tx.actionRequest.update({
        where: { id: action.id },
        data: {
          status: "cancelled",
          decidedBy: RESTART_DECIDER,
          decidedAt: at,
          comment: RESTART_COMMENT,
        },
      });
      events.push(
        await record(tx, cancelled, "cancelled", RESTART_DECIDER, { comment: RESTART_COMMENT }, at),
      );
    }
    return events;
  });
}

export type ClaimResult =
  | { outcome: "claimed"; action: ActionRequest; events: OutboxEntry[] }
  | {
      outcome: "refused";
      reason: "not_found" | "not_this_call" | "not_approved" | "already_started";
      action: ActionRequest | null;
    };

/**
 * mcp-gateway, before it sends an approved call: marks it started, once. Refused when the
 * request is not this execution's call of this tool with these arguments, is not approved, or
 * was claimed before (its call must not run again).
 */
export function claimActionCall(
  client: DbClient,
  input: {
    id: string;
    executionId: string;
    server: string;
    tool: string;
    rawArguments: string;
    replica: string;
    at: Date;
  },
): Promise<ClaimResult> {
  return inTransaction(client, async (tx) => {
    const action = await tx.actionRequest.findUnique({ where: { id: input.id } });
    if (!action) return { outcome: "refused", reason: "not_found", action: null };
    await tx.$queryRaw`SELECT id FROM action_requests WHERE id = ${input.id}::uuid FOR UPDATE`;
    const current = (await tx.actionRequest.findUnique({ where: { id: input.id } })) ?? action;
    if (
      current.executionId !== input.executionId ||
      current.server !== input.server ||
      current.tool !== input.tool ||
      current.rawArguments.trim() !== input.rawArguments.trim()
    ) {
      return { outcome: "refused", reason: "not_this_call", action: current };
    }
    if (current.status !== "approved") {
      return { outcome: "refused", reason: "not_approved", action: current };
    }
    if (current.callStatus !== "not_started") {
      return { outcome: "refused", reason: "already_started", action: current };
    }
    const started = await tx.actionRequest.update({
      where: { id: input.id },
      data: { callStatus: "started", callStartedAt: input.at, calledBy: input.replica },
    });
    const actor = `mcp-gateway:${input.replica}`;
    const events = [await record(tx, started, "call_started", actor, null, input.at)];
    return { outcome: "claimed", action: started, events };
  });
}

/**
 * The end of a claimed call: its status and masked result (while it is `started`, or
 * `unknown` when the runner gave up on it first: the real end is kept). `unknown`: the call
 * was sent and failed in a way that leaves its effect unknown (a timeout, a lost transport).
 */
export function finishActionCall(
  client: DbClient,
  input: {
    id: string;
    status: Extract<ActionCallStatus, "succeeded" | "failed" | "unknown">;
    result: string;
    actor: string;
    at: Date;
  },
): Promise<{ action: ActionRequest; events: OutboxEntry[] } | null> {
  return inTransaction(client, async (tx) => {
    await tx.$queryRaw`SELECT id FROM action_requests WHERE id = ${input.id}::uuid FOR UPDATE`;
    const action = await tx.actionRequest.findUnique({ where: { id: input.id } });
    if (!action || (action.callStatus !== "started" && action.callStatus !== "unknown")) {
      return null;
    }
    const ended = await tx.actionRequest.update({
      where: { id: input.id },
      data: { callStatus: input.status, callEndedAt: input.at, result: input.result },
    });
    const event =
      input.status === "succeeded"
        ? "call_succeeded"
        : input.status === "failed"
          ? "call_failed"
          : "outcome_unknown";
    const events = [
      await record(tx, ended, event, input.actor, { result: input.result }, input.at),
    ];
    return { action: ended, events };
  });
}

/**
 * A call that started and whose end was never recorded (the process making it died): its
 * outcome is unknown and it is never repeated; a person has to look.
 */
export function markActionOutcomeUnknown(
  client: DbClient,
  input: { id: string; actor: string; reason: string; at: Date },
): Promise<{ action: ActionRequest; events: OutboxEntry[] } | null> {
  return inTransaction(client, async (tx) => {
    await tx.$queryRaw`SELECT id FROM action_requests WHERE id = ${input.id}::uuid FOR UPDATE`;
    const action = await tx.actionRequest.findUnique({ where: { id: input.id } });
    if (!action || action.callStatus !== "started") return null;
    const unknown = await tx.actionRequest.update({
      where: { id: input.id },
      data: { callStatus: "unknown", callEndedAt: input.at },
    });
    const events = [
      await record(tx, unknown, "outcome_unknown", input.actor, { reason: input.reason }, input.at),
    ];
    return { action: unknown, events };
  });
}

/** Pending requests whose timeout passed, or whose execution ended: the sweep decides them. */
export async function findOverdueActions(
  client: DbClient,
  now: Date,
  limit: number,
): Promise<{ id: string; expired: boolean }[]> {
  // Pending requests are few (each parks an execution): read them all, oldest first.
  const pending = await client.actionRequest.findMany({
    where: { status: "pending" },
    select: { id: true, expiresAt: true, executionId: true },
    orderBy: { requestedAt: "asc" },
    take: 1_000,
  });
  const ended = new Set(
    (
      await client.agentExecution.findMany({
        where: {
          id: { in: pending.map((r) => r.executionId) },
          status: { notIn: [...ACTIVE_EXECUTION_STATUSES] },
        },
        select: { id: true },
      })
    ).map((e) => e.id),
  );
  return pending
    .filter((r) => ended.has(r.executionId) || (r.expiresAt !== null && r.expiresAt <= now))
    .slice(0, limit)
    .map((r) => ({ id: r.id, expired: !ended.has(r.executionId) }));
}

export function getAction(client: DbClient, id: string): Promise<ActionWithSession | null> {
  return client.actionRequest.findUnique({ where: { id }, include: SESSION_FACTS });
}

/** The action request of one tool call of an execution, if it has one. */
export function findActionOfCall(
  client: DbClient,
  executionId: string,
  toolCallId: string,
): Promise<ActionRequest | null> {
  return client.actionRequest.findUnique({
    where: { executionId_toolCallId: { executionId, toolCallId } },
  });
}

export function listActions(
  client: DbClient,
  query: { status?: ActionStatus; sessionId?: string; projects?: readonly string[]; limit: number },
): Promise<ActionWithSession[]> {
  return client.actionRequest.findMany({
    include: SESSION_FACTS,
    where: {
      ...(query.status ? { status: query.status } : {}),
      ...(query.sessionId ? { sessionId: query.sessionId } : {}),
      session: {
        deletedAt: null,
        ...(query.projects ? { project: { in: [...query.projects] } } : {}),
      },
    },
    orderBy: { requestedAt: "desc" },
    take: query.limit,
  });
}

/** A request's audit rows, oldest first. */
export async function actionAudit(client: DbClient, actionId: string): Promise<ActionAuditEntry[]> {
  const rows = await client.actionAuditEntry.findMany({
    where: { actionId },
    orderBy: { id: "asc" },
  });
  return rows.map((r) => ({
    id: Number(r.id),
    at: r.at.toISOString(),
    action_id: r.actionId,
    session_id: r.sessionId,
    execution_id: r.executionId,
    agent_name: r.agentName,
    tool_name: r.toolName,
    event: r.event as ActionAuditEvent,
    actor: r.actor,
    detail: (r.detail ?? null) as Record<string, unknown> | null,
  }));
}
