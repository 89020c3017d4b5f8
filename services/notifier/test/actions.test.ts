/**
 * Action requests waiting for a person (#30) are announced: in Slack (in the session's thread,
 * with the exact call, the agent's reason, the deadline and a link) and on the signed webhooks
 * (the request in the payload), once per request and target, whatever the redeliveries.
 * Requests approved by policy (`approval: auto`) and decided ones are not announced.
 */
import {
  type ActionStatusEvent,
  NotificationWebhookPayloadSchema,
  WEBHOOK_HEADERS,
} from "@tarsy/contracts";
import type { AlertSession } from "@tarsy/db";
import {
  actionView,
  type Db,
  decideAction,
  ensureStage,
  getAction,
  listSessionDeliveries,
  requestAction,
  startExecution,
} from "@tarsy/db";
import { describe, expect } from "vitest";
import {
  blockTexts,
  buttonOf,
  CHANNEL,
  DASHBOARD,
  deliveryOf,
  handled,
  newSession,
  postsFor,
  reach,
  startTestNotifier,
  notifierTest as test,
} from "./harness.ts";

/** A pending request of an action agent's mutating call, as agent-runner makes it. */
async function pendingRequest(
  db: Db,
  session: AlertSession,
  callId: string,
  auto = false,
  dryRun: { status: "succeeded" | "failed"; result: string } | null = null,
) {
  const { executions } = await ensureStage(
    db.prisma,
    { sessionId: session.id, stageName: "remediate", stageIndex: 1 },
    [{ agentName: "Remediator", agentIndex: 1 }],
  );
  const execution = executions[0];
  if (!execution) throw new Error("no execution");
  await startExecution(db.prisma, execution.id, "runner-1");
  const { action } = await requestAction(db.prisma, {
    sessionId: session.id,
    stageId: null,
    executionId: execution.id,
    agentName: "Remediator",
    toolCallId: callId,
    server: "kubernetes",
    tool: "pods_delete",
    rawArguments: '{"name":"payments-api-0","namespace":"payments"}',
    arguments: { name: "payments-api-0", namespace: "payments" },
    reason: "The pod is OOM-killed 14 times; a restart clears the leak until the fix ships.",
    approvalMode: auto ? "auto" : "required",
    expiresAt: auto ? null : new Date("2026-12-08T03:30:00Z"),
    dryRun,
    at: new Date(),
  });
  return action;
}

/** Publishes the request's action.status event as the outbox would; returns its seq. */
async function announced(
  db: Db,
  bus: Parameters<typeof reach>[1],
  actionId: string,
): Promise<number> {
  const row = await getAction(db.prisma, actionId);
  if (!row) throw new Error("no action");
  const event: ActionStatusEvent = {
    v: 1,
    type: "action.status",
    session_id: row.sessionId,
    action: actionView(row, row.session),
    timestamp: new Date().toISOString(),
  };
  const [published] = await bus.publish("actionStatus", event);
  return (published?.seq ?? 0) as number;
}

describe("action requests", () => {
  test("a pending request is announced once in the session's thread and on the webhook; auto and decided ones are not", async ({
    t,
    nats,
    slack,
    hook,
    notifiers,
  }) => {
    const alert = slack.seed(CHANNEL, { text: "[FIRING:1] PodOOM fingerprint: OOM-77" });
    notifiers.push(
      await startTestNotifier(t, nats, { slack, webhooks: [{ url: hook.url }] }),
      await startTestNotifier(
        t,
        nats,
        { slack, webhooks: [{ url: hook.url }] },
        {
          podId: "notifier-b",
        },
      ),
    );
    const session = await newSession(t.db, "fingerprint: OOM-77");
    await reach(t.db, nats.bus, session, "in_progress");
    const action = await pendingRequest(t.db, session, "call-1", false, {
      status: "succeeded",
      result: 'pod "payments-api-0" deleted (server dry run)',
    });
    // Redelivered and repeated events change nothing: one message per request and target.
    await announced(t.db, nats.bus, action.id);
    await announced(t.db, nats.bus, action.id);
    const slackDelivery = await deliveryOf(t.db, session.id, "slack", "action_requested");
    const hookDelivery = await deliveryOf(t.db, session.id, "webhook:0", "action_requested");
    expect(slackDelivery).toMatchObject({ status: "sent", subject: action.id, attempts: 1 });
    expect(hookDelivery).toMatchObject({ status: "sent", subject: action.id, attempts: 1 });

    const posts = postsFor(slack, session.id, "action_requested");
    expect(posts).toHaveLength(1);
    const [post] = posts;
    expect(post?.thread_ts).toBe(alert.ts);
    expect(post?.text).toBe("Approval needed: kubernetes.pods_delete (kubernetes)");
    expect(post?.metadata?.event_payload).toMatchObject({ subject: action.id });
    const texts = blockTexts(post?.blocks);
    expect(texts[0]).toBe(
      ":raised_hand: *Approval needed* — Remediator wants to run `kubernetes.pods_delete`\n*Counts as denied at:* 2026-12-08T03:30:00.000Z",
    );
    expect(texts[1]).toBe(
      '*Arguments:*\n```{\n  "name": "payments-api-0",\n  "namespace": "payments"\n}```',
    );
    expect(texts[2]).toBe(
      "*Agent's reason:*\nThe pod is OOM-killed 14 times; a restart clears the leak until the fix ships.",
    );
    expect(texts[3]).toBe(
      '*Dry run (succeeded):*\n```pod "payments-api-0" deleted (server dry run)```',
    );
    expect(texts[4]).toContain(`tarsy action approve ${action.id}`);
    expect(buttonOf(post?.blocks)).toMatchObject({
      url: `${DASHBOARD}/sessions/${session.id}`,
      text: { text: "Review and Decide" },
    });

    const requests = hook.requests.filter(
      (r) => r.headers[WEBHOOK_HEADERS.event] === "action_requested",
    );
    expect(requests).toHaveLength(1);
    const payload = NotificationWebhookPayloadSchema.parse(JSON.parse(requests[0]?.body ?? ""));
    expect(payload).toMatchObject({
      event: "action_requested",
      delivery_id: hookDelivery.id,
      session_id: session.id,
      status: "in_progress",
      url: `${DASHBOARD}/sessions/${session.id}`,
      action: {
        id: action.id,
        agent_name: "Remediator",
        tool_name: "kubernetes.pods_delete",
        arguments: { name: "payments-api-0", namespace: "payments" },
        status: "pending",
        expires_at: "2026-12-08T03:30:00.000Z",
        dry_run: { status: "succeeded", result: 'pod "payments-api-0" deleted (server dry run)' },
      },
    });

    // A second request of the same session gets its own announcement.
    const second = await pendingRequest(t.db, session, "call-2");
    await announced(t.db, nats.bus, second.id);
    await deliveryOf(
      t.db,
      session.id,
      "slack",
      "action_requested",
      (d) => d.subject === second.id && d.status === "sent",
    );
    // An auto-approved request and a decided one: nothing is sent for them.
    const auto = await pendingRequest(t.db, session, "call-3", true);
    await announced(t.db, nats.bus, auto.id);
    const third = await pendingRequest(t.db, session, "call-4");
    await decideAction(t.db.prisma, third.id, { status: "denied", actor: "alice", at: new Date() });
    const seq = await announced(t.db, nats.bus, third.id);
    await handled(nats, seq);
    const subjects = (await listSessionDeliveries(t.db.prisma, session.id))
      .filter((d) => d.event === "action_requested")
      .map((d) => `${d.target}:${d.subject}`)
      .sort();
    expect(subjects).toEqual(
      [
        `slack:${action.id}`,
        `slack:${second.id}`,
        `webhook:0:${action.id}`,
        `webhook:0:${second.id}`,
      ].sort(),
    );
    expect(postsFor(slack, session.id, "action_requested")).toHaveLength(2);
  });

  test("a webhook that lists its events gets no request unless it asks for action_requested", async ({
    t,
    nats,
    hook,
    notifiers,
  }) => {
    notifiers.push(
      await startTestNotifier(t, nats, {
        webhooks: [
          { url: hook.url, events: ["completed"] },
          { url: `${hook.url}?a`, events: ["action_requested"] },
        ],
      }),
    );
    const session = await newSession(t.db);
    const action = await pendingRequest(t.db, session, "call-1");
    const seq = await announced(t.db, nats.bus, action.id);
    await handled(nats, seq);
    await deliveryOf(t.db, session.id, "webhook:1", "action_requested");
    expect(
      (await listSessionDeliveries(t.db.prisma, session.id)).map((d) => [d.target, d.event]),
    ).toEqual([["webhook:1", "action_requested"]]);
  });
});
