/**
 * An action agent's execution restarted from scratch (its earlier attempt was cut off and its
 * conversation is not resumed, `queue.resume_interrupted: false` or an unresumable one): the
 * action requests that attempt left pending are cancelled at once, with an audit row and an
 * action.status event, instead of waiting for their timeout. Decided ones stay as they are.
 */
import type { ActionStatusEvent } from "@tarsy/contracts";
import { createCostEstimator } from "@tarsy/cost";
import {
  actionAudit,
  decideAction,
  getAction,
  type OutboxEntry,
  RESTART_COMMENT,
  RESTART_DECIDER,
  requestAction,
} from "@tarsy/db";
import { describe, expect } from "vitest";
import { createPostgresStore } from "../src/store.ts";
import { seedExecution, runnerTest as test } from "./support.ts";

describe("restart from scratch", () => {
  test("cancels the requests the earlier attempt left pending; decided ones are kept", async ({
    env,
  }) => {
    const request = await seedExecution(env, { kind: "action" });
    const executionId = request.execution_id;
    const published: OutboxEntry[] = [];
    const store = createPostgresStore(
      env.db,
      createCostEstimator({ enabled: false, model_rates: {}, promotions: [] }),
      async (entry) => void published.push(entry),
    );
    const first = await store.startAttempt(executionId, "runner-1", { resumeInterrupted: false });
    expect(first?.attempt).toBe(1);
    const ask = (callId: string) =>
      requestAction(env.db.prisma, {
        sessionId: request.session_id,
        stageId: request.stage_id,
        executionId,
        agentName: "Remediator",
        toolCallId: callId,
        server: "kubernetes",
        tool: "pods_delete",
        rawArguments: '{"name":"web-0"}',
        arguments: { name: "web-0" },
        reason: "restart it",
        approvalMode: "required",
        expiresAt: new Date(Date.now() + 3_600_000),
        at: new Date(),
      });
    const pending = (await ask("call-1")).action;
    const approved = (await ask("call-2")).action;
    await decideAction(env.db.prisma, approved.id, {
      status: "approved",
      actor: "alice",
      at: new Date(),
    });

    // The runner died; the next attempt starts the loop again.
    const second = await store.startAttempt(executionId, "runner-2", { resumeInterrupted: false });
    expect(second?.attempt).toBe(2);

    expect(await getAction(env.db.prisma, pending.id)).toMatchObject({
      status: "cancelled",
      decidedBy: RESTART_DECIDER,
      comment: RESTART_COMMENT,
    });
    expect((await actionAudit(env.db.prisma, pending.id)).map((e) => [e.event, e.actor])).toEqual([
      ["requested", "agent:Remediator"],
      ["cancelled", RESTART_DECIDER],
    ]);
    expect(await getAction(env.db.prisma, approved.id)).toMatchObject({
      status: "approved",
      decidedBy: "alice",
    });
    // Its event went out at once, for the dashboard, the API's watchers and the notifier.
    const statuses = published
      .filter((e) => e.key === "actionStatus")
      .map((e) => (e.payload as ActionStatusEvent).action)
      .map((a) => [a.id, a.status, a.decided_by]);
    expect(statuses).toEqual([[pending.id, "cancelled", RESTART_DECIDER]]);
  });
});
