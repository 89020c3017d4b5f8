import { createHmac } from "node:crypto";
import {
  type ActionList,
  NotificationWebhookPayloadSchema,
  type SessionDetail,
  type SessionNotificationsResponse,
  SessionNotificationsResponseSchema,
  TERMINAL_SESSION_STATUSES,
  WEBHOOK_HEADERS,
} from "@tarsy/contracts";
import {
  type FakeSlack,
  type FakeSlackPost,
  startFakeSlack,
  startWebhookReceiver,
  until,
  type WebhookReceiver,
} from "@tarsy/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { notificationsStack, saveLogs, waitStatus } from "./scenario-support.ts";
import { bootSystem, type E2E } from "./support.ts";

const CHANNEL = "C0ONCALL";
const SECRET = "e2e-webhook-secret";
const DASHBOARD = "https://tarsy.example.com";

/**
 * Notifications end to end: every service a process (`pnpm start`'s stack, the notifier
 * included), the scripted LLM, a loopback Slack Web API and a loopback webhook receiver.
 */
describe("e2e: Notifications", () => {
  let sys: E2E;
  let slack: FakeSlack;
  let hook: WebhookReceiver;
  const api = <T>(path: string, init?: RequestInit) => sys.api<T>(path, init);

  const postsOf = (sessionId: string) =>
    slack.posts.filter((p) => p.metadata?.event_payload.session_id === sessionId);
  const texts = (post: FakeSlackPost | undefined) =>
    (post?.blocks ?? []).flatMap((b) => {
      const text = (b as { text?: { text?: string } }).text?.text;
      return text ? [text] : [];
    });
  const button = (post: FakeSlackPost | undefined) =>
    (post?.blocks ?? []).flatMap((b) => (b as { elements?: { url?: string }[] }).elements ?? [])[0];
  const hooksOf = (sessionId: string) =>
    hook.requests.filter((r) => JSON.parse(r.body).session_id === sessionId);
  /** What the session's Notifications API says (checked against its schema). */
  const deliveriesOf = async (sessionId: string) => {
    const res = await api<SessionNotificationsResponse>(
      `/api/v1/sessions/${sessionId}/notifications`,
    );
    expect(res.status).toBe(200);
    return SessionNotificationsResponseSchema.parse(res.body).deliveries;
  };
  /** Waits for `count` Slack posts about the session (its notifications are sent after it ends). */
  const waitPosts = (sessionId: string, count: number) =>
    until(async () => (postsOf(sessionId).length >= count ? postsOf(sessionId) : undefined), {
      what: `${count} Slack posts about ${sessionId}`,
      timeoutMs: 30_000,
    });

  beforeAll(async () => {
    slack = await startFakeSlack();
    hook = await startWebhookReceiver();
    sys = await bootSystem(notificationsStack(slack, hook, SECRET));
  }, 180_000);

  afterAll(async () => {
    saveLogs(sys, "notifications");
    await sys?.stop();
    await slack?.close();
    await hook?.close();
  }, 60_000);

  it("an Alertmanager alert from a Slack conversation: start and outcome in its thread, webhooks signed", async () => {
    const alert = slack.seed(CHANNEL, {
      text: ":fire: [FIRING:1] DiskFull on node-3 — ref SLACK-Thread-42",
    });
    slack.seed(CHANNEL, { text: "someone else's alert" });
    const res = await api<{ sessions_created: { session_id: string }[] }>(
      "/api/v1/alerts/alertmanager",
      {
        method: "POST",
        body: JSON.stringify({
          version: "4",
          status: "firing",
          receiver: "tarsy",
          groupKey: '{}:{alertname="DiskFull"}',
          groupLabels: { alertname: "DiskFull" },
          commonLabels: { alertname: "DiskFull" },
          commonAnnotations: {},
          externalURL: "http://alertmanager:9093",
          truncatedAlerts: 0,
          alerts: [
            {
              status: "firing",
              labels: { alertname: "DiskFull", node: "node-3" },
              annotations: { summary: "disk full", slack_thread: "slack-thread-42" },
              startsAt: "2026-11-26T03:00:00Z",
              endsAt: "0001-01-01T00:00:00Z",
              fingerprint: "e2e-notify-disk",
            },
          ],
        }),
      },
    );
    expect(res.status).toBe(200);
    const id = res.body.sessions_created[0]?.session_id ?? "";
    expect((await waitStatus(sys, id, TERMINAL_SESSION_STATUSES, 90_000)).status).toBe("completed");

    const posts = await waitPosts(id, 2);
    const started = posts.find((p) => p.metadata?.event_payload.event === "started");
    const completed = posts.find((p) => p.metadata?.event_payload.event === "completed");
    expect(started?.thread_ts).toBe(alert.ts);
    expect(completed?.thread_ts).toBe(alert.ts);
    expect(texts(started).join("\n")).toContain(`<${DASHBOARD}/sessions/${id}|View in Dashboard>`);
    expect(texts(completed)).toEqual([
      ":white_check_mark: *Analysis Complete*",
      "Disk full on node-3: rotate /var/log.",
    ]);
    expect(button(completed)?.url).toBe(`${DASHBOARD}/sessions/${id}`);

    const requests = await until(async () => (hooksOf(id).length >= 2 ? hooksOf(id) : undefined), {
      what: "two webhook requests",
      timeoutMs: 30_000,
    });
    for (const request of requests) {
      const ts = String(request.headers[WEBHOOK_HEADERS.timestamp]);
      const signature = createHmac("sha256", SECRET).update(`${ts}.${request.body}`).digest("hex");
      expect(request.headers[WEBHOOK_HEADERS.signature]).toBe(`sha256=${signature}`);
    }
    const payloads = requests.map((r) =>
      NotificationWebhookPayloadSchema.parse(JSON.parse(r.body)),
    );
    expect(payloads.map((p) => p.event).sort()).toEqual(["completed", "started"]);
    expect(payloads.find((p) => p.event === "completed")).toMatchObject({
      status: "completed",
      alert_type: "Notified",
      executive_summary: "Disk full on node-3: rotate /var/log.",
      final_analysis: expect.stringContaining("/var/log is full"),
    });

    // The session's API says who was told: each target, each event, sent at the first try.
    const told = await until(
      async () => {
        const all = await deliveriesOf(id);
        return all.length === 4 && all.every((d) => d.status === "sent") ? all : undefined;
      },
      { what: "four sent deliveries", timeoutMs: 30_000 },
    );
    expect(told.map((d) => `${d.target} ${d.event}`).sort()).toEqual([
      "slack completed",
      "slack started",
      "webhook:0 completed",
      "webhook:0 started",
    ]);
    for (const d of told) {
      expect(d).toMatchObject({ attempts: 1, last_error: null });
      expect(Date.parse(d.sent_at ?? "")).toBeGreaterThanOrEqual(Date.parse(d.created_at));
    }
  }, 150_000);

  it("an action request waiting for a person: announced once in Slack with a link and on the signed webhook", async () => {
    const res = await api<{ session_id: string }>("/api/v1/alerts", {
      method: "POST",
      headers: { "x-forwarded-user": "e2e" },
      body: JSON.stringify({ alert_type: "NeedsApproval", data: { summary: "disk full" } }),
    });
    expect(res.status).toBe(202);
    const id = res.body.session_id;
    const announcedIn = (p: FakeSlackPost) =>
      p.metadata?.event_payload.event === "action_requested";
    const post = await until(async () => postsOf(id).find(announcedIn), {
      what: "the Slack announcement of the action request",
      timeoutMs: 60_000,
    });
    const list = await api<ActionList>(`/api/v1/actions?session_id=${id}`);
    const action = list.body.actions[0];
    expect(action?.status).toBe("pending");
    expect(post.metadata?.event_payload).toMatchObject({ subject: action?.id });
    expect(post.text).toBe("Approval needed: everything.get-sum (NeedsApproval)");
    const [header, args, reason, how] = texts(post);
    expect(header).toMatch(
      /^:raised_hand: \*Approval needed\* — Remediator wants to run `everything.get-sum`\n\*Counts as denied at:\* \d{4}-/,
    );
    expect(args).toBe('*Arguments:*\n```{\n  "a": 2,\n  "b": 3\n}```');
    expect(reason).toContain("the node's disk is full");
    expect(how).toContain(`tarsy action approve ${action?.id}`);
    expect(button(post)?.url).toBe(`${DASHBOARD}/sessions/${id}`);

    const request = await until(
      async () => hooksOf(id).find((r) => JSON.parse(r.body).event === "action_requested"),
      { what: "the action_requested webhook", timeoutMs: 30_000 },
    );
    const ts = String(request.headers[WEBHOOK_HEADERS.timestamp]);
    const signature = createHmac("sha256", SECRET).update(`${ts}.${request.body}`).digest("hex");
    expect(request.headers[WEBHOOK_HEADERS.signature]).toBe(`sha256=${signature}`);
    expect(NotificationWebhookPayloadSchema.parse(JSON.parse(request.body))).toMatchObject({
      event: "action_requested",
      session_id: id,
      url: `${DASHBOARD}/sessions/${id}`,
      action: {
        id: action?.id,
        agent_name: "Remediator",
        tool_name: "everything.get-sum",
        arguments: { a: 2, b: 3 },
        status: "pending",
        expires_at: action?.expires_at,
      },
    });

    const approve = await api(`/api/v1/actions/${action?.id}/approve`, {
      method: "POST",
      headers: { "x-forwarded-user": "alice@example.com" },
      body: JSON.stringify({ comment: "go" }),
    });
    expect(approve.status).toBe(200);
    const done = await waitStatus(sys, id, TERMINAL_SESSION_STATUSES, 90_000);
    expect(done.status).toBe("completed");
    // Announced once per target, and the session's API says so.
    const told = await until(
      async () => {
        const all = (await deliveriesOf(id)).filter((d) => d.event === "action_requested");
        return all.length === 2 && all.every((d) => d.status === "sent") ? all : undefined;
      },
      { what: "two sent action_requested deliveries", timeoutMs: 30_000 },
    );
    expect(told.map((d) => `${d.target} ${d.action_id}`).sort()).toEqual(
      [`slack ${action?.id}`, `webhook:0 ${action?.id}`].sort(),
    );
    await until(
      async () => postsOf(id).some((p) => p.metadata?.event_payload.event === "completed"),
      {
        what: "the completed message",
        timeoutMs: 30_000,
      },
    );
    expect(postsOf(id).filter(announcedIn)).toHaveLength(1);
  }, 150_000);

  it("the notifications of an unknown session are a 404", async () => {
    const res = await api<{ error: { code: string } }>(
      "/api/v1/sessions/00000000-0000-4000-8000-000000000000/notifications",
    );
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("not_found");
  });

  it("a REST alert with slack_message_fingerprint that fails: the error in its thread", async () => {
    const alert = slack.seed(CHANNEL, { text: "Checkout is down (ticket INC-9001)" });
    const res = await api<{ session_id: string }>("/api/v1/alerts", {
      method: "POST",
      body: JSON.stringify({
        data: { summary: "BREAK-ME: checkout down" },
        slack_message_fingerprint: "inc-9001",
      }),
    });
    expect(res.status).toBe(202);
    const id = res.body.session_id;
    const done = await waitStatus(sys, id, TERMINAL_SESSION_STATUSES, 90_000);
    expect(done.status).toBe("failed");
    const detail = await api<SessionDetail>(`/api/v1/sessions/${id}`);
    expect(detail.body.slack_message_fingerprint).toBe("inc-9001");
    const posts = await waitPosts(id, 2);
    const failed = posts.find((p) => p.metadata?.event_payload.event === "failed");
    expect(failed?.thread_ts).toBe(alert.ts);
    const [header] = texts(failed);
    expect(header).toMatch(/^:x: \*Analysis Failed\*\n\n\*Error:\*\n/);
    expect(header).toContain(done.error_message ?? "(no error message)");
    const failedHook = await until(
      async () => hooksOf(id).find((r) => JSON.parse(r.body).event === "failed"),
      { what: "the failed webhook", timeoutMs: 30_000 },
    );
    expect(JSON.parse(failedHook.body).error_message).toBe(done.error_message);
  }, 150_000);

  it("Slack down: the session is unaffected, and the message is posted once Slack is back", async () => {
    slack.down = 503;
    const res = await api<{ session_id: string }>("/api/v1/alerts", {
      method: "POST",
      body: JSON.stringify({ data: { summary: "disk filling up on node-7" } }),
    });
    const id = res.body.session_id;
    const done = await waitStatus(sys, id, TERMINAL_SESSION_STATUSES, 90_000);
    expect(done.status).toBe("completed");
    // The notifier has failed at least twice and keeps the delivery for a retry; the session's
    // API shows it waiting, with the reason.
    const pending = await until(
      async () => {
        const slackOne = (await deliveriesOf(id)).find((d) => d.target === "slack");
        return slackOne && slackOne.attempts >= 2 ? slackOne : undefined;
      },
      { what: "two failed attempts", timeoutMs: 30_000 },
    );
    expect(pending).toMatchObject({
      event: "completed",
      status: "sending",
      last_error: "Slack answered HTTP 503",
      sent_at: null,
    });
    expect(postsOf(id)).toEqual([]);

    slack.down = null;
    const [posted] = await waitPosts(id, 1);
    // No fingerprint: no start message, the outcome goes to the channel.
    expect(posted?.thread_ts).toBeUndefined();
    expect(texts(posted)[0]).toBe(":white_check_mark: *Analysis Complete*");
    const sent = await until(
      async () => {
        const slackOne = (await deliveriesOf(id)).find((d) => d.target === "slack");
        return slackOne?.status === "sent" ? slackOne : undefined;
      },
      { what: "the Slack delivery to be marked sent", timeoutMs: 30_000 },
    );
    expect(sent.last_error).toBeNull();
    expect(postsOf(id)).toHaveLength(1);
  }, 150_000);
});
