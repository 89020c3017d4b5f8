import { describe, expect } from "vitest";
import {
  actionAudit,
  claimActionCall,
  decideAction,
  ensureStage,
  findOverdueActions,
  finishActionCall,
  requestAction,
  startExecution,
  suspendForAction,
} from "../src/index.ts";
import { forceExecutionStatus } from "../src/testing.ts";
import { newSession } from "./fixtures.ts";
import { dbTest as test } from "./support.ts";

const USAGE = { input_tokens: 10, output_tokens: 5, thinking_tokens: 0, total_tokens: 15 };

async function actionExecution(db: Parameters<typeof newSession>[0]) {
  const session = await newSession(db);
  const { executions } = await ensureStage(
    db,
    { sessionId: session.id, stageName: "remediate", stageIndex: 1 },
    [{ agentName: "Remediator", agentIndex: 1 }],
  );
  const execution = executions[0];
  if (!execution) throw new Error("no execution");
  await startExecution(db, execution.id, "runner-1");
  return execution;
}

const newRequest = (
  execution: { id: string; sessionId: string },
  callId: string,
  options: { auto?: boolean; expiresAt?: Date | null } = {},
) => ({
  sessionId: execution.sessionId,
  stageId: null,
  executionId: execution.id,
  agentName: "Remediator",
  toolCallId: callId,
  server: "kubernetes",
  tool: "pods_delete",
  rawArguments: '{"name":"web-0"}',
  arguments: { name: "web-0" },
  reason: "restart it",
  approvalMode: options.auto ? ("auto" as const) : ("required" as const),
  expiresAt: options.expiresAt === undefined ? new Date(Date.now() + 60_000) : options.expiresAt,
  at: new Date(),
});

const claim = (id: string, executionId: string, replica: string) => ({
  id,
  executionId,
  server: "kubernetes",
  tool: "pods_delete",
  rawArguments: '{"name":"web-0"}',
  replica,
  at: new Date(),
});

describe("action requests", () => {
  test("one request per call; a decision once; ten concurrent claims start the call once", async ({
    db,
  }) => {
    const execution = await actionExecution(db.prisma);
    const first = await requestAction(db.prisma, newRequest(execution, "call-1"));
    const repeat = await requestAction(db.prisma, newRequest(execution, "call-1"));
    expect([first.created, repeat.created]).toEqual([true, false]);
    expect(repeat.action.id).toBe(first.action.id);
    expect(first.action.requestedBy).toBe("tester");

    // Not approved yet: no claim.
    const early = await claimActionCall(db.prisma, claim(first.action.id, execution.id, "a"));
    expect(early).toMatchObject({ outcome: "refused", reason: "not_approved" });

    const decisions = await Promise.all(
      ["approved", "denied"].map((status) =>
        decideAction(db.prisma, first.action.id, {
          status: status as "approved" | "denied",
          actor: status === "approved" ? "alice" : "bob",
          at: new Date(),
        }),
      ),
    );
    expect(decisions.filter((d) => d.outcome === "decided")).toHaveLength(1);
    expect(decisions.filter((d) => d.outcome === "already_decided")).toHaveLength(1);

    const claims = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        claimActionCall(db.prisma, claim(first.action.id, execution.id, `gw-${i}`)),
      ),
    );
    const decided = decisions.find((d) => d.outcome === "decided");
    if (decided?.action.status === "approved") {
      expect(claims.filter((c) => c.outcome === "claimed")).toHaveLength(1);
      expect(
        claims.filter((c) => c.outcome === "refused" && c.reason === "already_started"),
      ).toHaveLength(9);
    } else {
      expect(claims.every((c) => c.outcome === "refused" && c.reason === "not_approved")).toBe(
        true,
      );
    }
  });

  test("auto requests are approved by the policy; a call's end is recorded once; the audit is append-only", async ({
    db,
  }) => {
    const execution = await actionExecution(db.prisma);
    const { action } = await requestAction(
      db.prisma,
      newRequest(execution, "auto-1", { auto: true }),
    );
    expect(action).toMatchObject({ status: "approved", decidedBy: "policy:auto", expiresAt: null });
    expect(await claimActionCall(db.prisma, claim(action.id, execution.id, "a"))).toMatchObject({
      outcome: "claimed",
    });
    const ended = await finishActionCall(db.prisma, {
      id: action.id,
      status: "succeeded",
      result: "pod deleted",
      actor: "mcp-gateway:a",
      at: new Date(),
    });
    expect(ended?.action).toMatchObject({ callStatus: "succeeded", result: "pod deleted" });
    const twice = await finishActionCall(db.prisma, {
      id: action.id,
      status: "failed",
      result: "again",
      actor: "mcp-gateway:a",
      at: new Date(),
    });
    expect(twice).toBeNull();
    expect((await actionAudit(db.prisma, action.id)).map((e) => [e.event, e.actor])).toEqual([
      ["requested", "agent:Remediator"],
      ["approved", "policy:auto"],
      ["call_started", "mcp-gateway:a"],
      ["call_succeeded", "mcp-gateway:a"],
    ]);
    await expect(db.prisma.actionAuditEntry.deleteMany({})).rejects.toThrow(/append-only/);
  });

  test("a pending request parks its execution; the decision wakes it with its resume request", async ({
    db,
  }) => {
    const execution = await actionExecution(db.prisma);
    const { action } = await requestAction(db.prisma, newRequest(execution, "park-1"));
    const resumeRequest = {
      v: 1,
      session_id: execution.sessionId,
      stage_id: execution.stageId,
      execution_id: execution.id,
      kind: "action",
      agent_name: "Remediator",
      agent_index: 1,
      requested_at: new Date().toISOString(),
    };
    expect(
      await suspendForAction(db.prisma, {
        executionId: execution.id,
        attempt: 1,
        actionId: action.id,
        resumeRequest,
        usage: USAGE,
      }),
    ).toBe("suspended");
    const result = await decideAction(db.prisma, action.id, {
      status: "approved",
      actor: "alice",
      at: new Date(),
    });
    expect(result.outcome).toBe("decided");
    const keys = result.outcome === "decided" ? result.events.map((e) => e.key) : [];
    expect(keys).toEqual(["actionStatus", "executionRequested"]);
    const woken = await db.prisma.agentExecution.findUnique({ where: { id: execution.id } });
    expect(woken?.suspendedAt).toBeNull();
    // Decided before it parks: it goes on at once.
    const { action: late } = await requestAction(db.prisma, newRequest(execution, "park-2"));
    await decideAction(db.prisma, late.id, { status: "denied", actor: "bob", at: new Date() });
    expect(
      await suspendForAction(db.prisma, {
        executionId: execution.id,
        attempt: 1,
        actionId: late.id,
        resumeRequest,
        usage: USAGE,
      }),
    ).toBe("decided");
  });

  test("four eyes refuses the submitter's approval; overdue requests are found (expired, or their execution ended)", async ({
    db,
  }) => {
    const execution = await actionExecution(db.prisma);
    const { action } = await requestAction(db.prisma, newRequest(execution, "eyes-1"));
    const own = await decideAction(db.prisma, action.id, {
      status: "approved",
      actor: "tester",
      fourEyes: true,
      at: new Date(),
    });
    expect(own.outcome).toBe("four_eyes");
    const past = await requestAction(
      db.prisma,
      newRequest(execution, "late-1", { expiresAt: new Date(Date.now() - 1_000) }),
    );
    const other = await actionExecution(db.prisma);
    const orphan = await requestAction(db.prisma, newRequest(other, "orphan-1"));
    await forceExecutionStatus(db.prisma, other.id, "cancelled");
    const overdue = await findOverdueActions(db.prisma, new Date(), 10);
    expect(overdue).toEqual(
      expect.arrayContaining([
        { id: past.action.id, expired: true },
        { id: orphan.action.id, expired: false },
      ]),
    );
    expect(overdue.map((o) => o.id)).not.toContain(action.id);
    const cancelled = await decideAction(db.prisma, orphan.action.id, {
      status: "expired",
      actor: "timeout",
      at: new Date(),
    });
    expect(cancelled).toMatchObject({
      outcome: "already_decided",
      action: { status: "cancelled" },
    });
  });
});
