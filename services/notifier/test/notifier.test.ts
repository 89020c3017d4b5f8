/**
 * The notifier against the real Postgres and NATS, a loopback Slack Web API and a loopback
 * webhook receiver: what is posted where, exactly once, and what happens when they fail.
 */
import { createHmac } from "node:crypto";
import {
  NotificationWebhookPayloadSchema,
  SESSIONS_EVENTS_SUBJECT,
  WEBHOOK_HEADERS,
} from "@tarsy/contracts";
import { getSession, listSessionDeliveries } from "@tarsy/db";
import { describe, expect } from "vitest";
import { MAX_BLOCK_TEXT } from "../src/messages.ts";
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
  WEBHOOK_SECRET,
} from "./harness.ts";

describe("Slack", () => {
  test("threads on the alert's message: start, then the outcome with the summary and a link", async ({
    t,
    nats,
    slack,
    notifiers,
  }) => {
    const alert = slack.seed(CHANNEL, {
      text: "[FIRING:1] PodCrashLooping\nfingerprint:   ABC-123\n  in namespace payments",
    });
    slack.seed(CHANNEL, { text: "unrelated chatter" });
    notifiers.push(await startTestNotifier(t, nats, { slack }));
    // Case and runs of whitespace do not matter.
    const session = await newSession(t.db, "fingerprint: abc-123 \n in   NAMESPACE payments");

    await reach(t.db, nats.bus, session, "in_progress");
    await deliveryOf(t.db, session.id, "slack", "started");
    const [started] = postsFor(slack, session.id, "started");
    expect(started?.thread_ts).toBe(alert.ts);
    expect(started?.channel).toBe(CHANNEL);
    expect(blockTexts(started?.blocks).join("\n")).toContain(`*Processing started*`);
    expect(blockTexts(started?.blocks).join("\n")).toContain(
      `<${DASHBOARD}/sessions/${session.id}|View in Dashboard>`,
    );

    await reach(t.db, nats.bus, session, "completed", {
      finalAnalysis: "The pod ran out of memory.",
      executiveSummary: "OOMKilled: raise the memory limit of payments-api.",
    });
    const delivery = await deliveryOf(t.db, session.id, "slack", "completed");
    expect(delivery).toMatchObject({ status: "sent", attempts: 1, threadTs: alert.ts });
    const [done] = postsFor(slack, session.id, "completed");
    expect(done?.thread_ts).toBe(alert.ts);
    expect(blockTexts(done?.blocks)).toEqual([
      ":white_check_mark: *Analysis Complete*",
      "OOMKilled: raise the memory limit of payments-api.",
    ]);
    expect(buttonOf(done?.blocks)).toMatchObject({
      url: `${DASHBOARD}/sessions/${session.id}`,
      text: { text: "View Full Analysis" },
    });
    expect(done?.text).toBe("Analysis Complete: kubernetes");
    // The search stayed in the bounded window (24 h, pages of 200).
    const search = slack.calls.find((c) => c.method === "conversations.history");
    expect(Number(search?.params.limit)).toBe(200);
    expect(Number(search?.params.oldest)).toBeGreaterThan(Date.now() / 1000 - 24 * 3600 - 60);
  });

  test("without a fingerprint: no start message; the outcome goes to the channel", async ({
    t,
    nats,
    slack,
    hook,
    notifiers,
  }) => {
    // The webhook takes "started" too: it shows the start event was handled.
    notifiers.push(
      await startTestNotifier(t, nats, {
        slack,
        webhooks: [{ url: hook.url, events: ["started", "failed"] }],
      }),
    );
    const session = await newSession(t.db);
    const startSeq = await reach(t.db, nats.bus, session, "in_progress");
    await handled(nats, startSeq);
    await deliveryOf(t.db, session.id, "webhook:0", "started");
    expect(postsFor(slack, session.id)).toEqual([]);

    await reach(t.db, nats.bus, session, "failed", {
      errorMessage: "stage investigate failed: LLM provider unavailable",
    });
    await deliveryOf(t.db, session.id, "slack", "failed");
    const [failed] = postsFor(slack, session.id);
    expect(failed?.thread_ts).toBeUndefined();
    expect(blockTexts(failed?.blocks)).toEqual([
      ":x: *Analysis Failed*\n\n*Error:*\nstage investigate failed: LLM provider unavailable",
    ]);
    expect(buttonOf(failed?.blocks)).toMatchObject({ text: { text: "View Details" } });
  });

  test("a fingerprint with no message in the channel: both messages go to the channel", async ({
    t,
    nats,
    slack,
    notifiers,
  }) => {
    notifiers.push(await startTestNotifier(t, nats, { slack }));
    const session = await newSession(t.db, "no-such-alert");
    await reach(t.db, nats.bus, session, "in_progress");
    await reach(t.db, nats.bus, session, "timed_out", {
      errorMessage: "session timed out after 20s (queue.session_timeout)",
    });
    await deliveryOf(t.db, session.id, "slack", "timed_out");
    await deliveryOf(t.db, session.id, "slack", "started");
    const posts = postsFor(slack, session.id);
    expect(posts.map((p) => p.thread_ts)).toEqual([undefined, undefined]);
    expect(blockTexts(postsFor(slack, session.id, "timed_out")[0]?.blocks)[0]).toMatch(
      /^:hourglass: \*Analysis Timed Out\*/,
    );
  });

  test("a long analysis is cut at Slack's limit; a cancelled session says so", async ({
    t,
    nats,
    slack,
    notifiers,
  }) => {
    notifiers.push(await startTestNotifier(t, nats, { slack }));
    const long = await newSession(t.db);
    await reach(t.db, nats.bus, long, "completed", { finalAnalysis: "é".repeat(5000) });
    await deliveryOf(t.db, long.id, "slack", "completed");
    const text = blockTexts(postsFor(slack, long.id)[0]?.blocks)[1] ?? "";
    expect(text.startsWith("é".repeat(MAX_BLOCK_TEXT))).toBe(true);
    expect(text).toMatch(/truncated — view full analysis in dashboard/);
    expect(text.length).toBeLessThan(3000);

    // A cancellation, not an error: who cancelled and why.
    const cancelled = await newSession(t.db);
    await reach(t.db, nats.bus, cancelled, "cancelled", {
      errorMessage: "cancelled by alice",
      cancelledBy: "alice",
      cancelReason: "duplicate of INC-123",
    });
    await deliveryOf(t.db, cancelled.id, "slack", "cancelled");
    const [post] = postsFor(slack, cancelled.id);
    expect(blockTexts(post?.blocks)[0]).toBe(
      ":no_entry_sign: *Analysis Cancelled*\n\nCancelled by alice: duplicate of INC-123",
    );
    expect(JSON.stringify(post?.blocks)).not.toContain("Error");
    // Without a reason, who; a session cancelled before it was recorded: the header alone.
    const noReason = await newSession(t.db);
    await reach(t.db, nats.bus, noReason, "cancelled", { cancelledBy: "bob" });
    await deliveryOf(t.db, noReason.id, "slack", "cancelled");
    expect(blockTexts(postsFor(slack, noReason.id)[0]?.blocks)[0]).toBe(
      ":no_entry_sign: *Analysis Cancelled*\n\nCancelled by bob",
    );
    const older = await newSession(t.db);
    await reach(t.db, nats.bus, older, "cancelled", { errorMessage: "cancelled by carol" });
    await deliveryOf(t.db, older.id, "slack", "cancelled");
    expect(blockTexts(postsFor(slack, older.id)[0]?.blocks)[0]).toBe(
      ":no_entry_sign: *Analysis Cancelled*",
    );
  });

  test("Slack down: the send is retried with backoff until it answers, then posted once", async ({
    t,
    nats,
    slack,
    notifiers,
  }) => {
    slack.down = 503;
    notifiers.push(await startTestNotifier(t, nats, { slack }, { maxAttempts: 50 }));
    const session = await newSession(t.db);
    await reach(t.db, nats.bus, session, "completed", { finalAnalysis: "done" });
    const failing = await deliveryOf(
      t.db,
      session.id,
      "slack",
      "completed",
      (d) => d.attempts >= 3,
    );
    expect(failing.status).toBe("sending");
    expect(failing.lastError).toBe("Slack answered HTTP 503");
    // The session itself is untouched by it.
    expect((await getSession(t.db.prisma, session.id))?.status).toBe("completed");

    slack.down = null;
    const sent = await deliveryOf(t.db, session.id, "slack", "completed");
    expect(sent.status).toBe("sent");
    expect(sent.attempts).toBeGreaterThanOrEqual(3);
    expect(postsFor(slack, session.id)).toHaveLength(1);
  });

  test("retries are bounded; a refusal no retry fixes (a revoked token) fails at once", async ({
    t,
    nats,
    slack,
    notifiers,
  }) => {
    slack.down = 503;
    notifiers.push(await startTestNotifier(t, nats, { slack }, { maxAttempts: 3 }));
    const session = await newSession(t.db);
    await reach(t.db, nats.bus, session, "completed", { finalAnalysis: "done" });
    expect(await deliveryOf(t.db, session.id, "slack", "completed")).toMatchObject({
      status: "failed",
      attempts: 3,
      lastError: "Slack answered HTTP 503",
    });

    slack.down = null;
    notifiers.push(
      await startTestNotifier(t, nats, { slack, slackToken: "xoxb-revoked" }, { podId: "revoked" }),
    );
    await notifiers.shift()?.stop();
    const refused = await newSession(t.db);
    await reach(t.db, nats.bus, refused, "completed", { finalAnalysis: "done" });
    expect(await deliveryOf(t.db, refused.id, "slack", "completed")).toMatchObject({
      status: "failed",
      attempts: 1,
      lastError: "Slack refused: invalid_auth",
    });
    expect(postsFor(slack, refused.id)).toEqual([]);
  });
});

describe("session labels", () => {
  test("a completed session's labels lead its Slack message and ride in the webhook payload", async ({
    t,
    nats,
    slack,
    hook,
    notifiers,
  }) => {
    notifiers.push(await startTestNotifier(t, nats, { slack, webhooks: [{ url: hook.url }] }));
    const session = await newSession(t.db);
    await reach(t.db, nats.bus, session, "in_progress");
    await reach(t.db, nats.bus, session, "completed", {
      finalAnalysis: "A maintenance job restarted the pod.",
      executiveSummary: "Maintenance restart; nothing to do.",
      labels: ["noise"],
    });
    await deliveryOf(t.db, session.id, "slack", "completed");
    const [done] = postsFor(slack, session.id, "completed");
    expect(blockTexts(done?.blocks)).toEqual([
      ":white_check_mark: *Analysis Complete*\n*Labels:* `noise`",
      "Maintenance restart; nothing to do.",
    ]);
    expect(done?.text).toBe("Analysis Complete: kubernetes [labels: noise]");

    await deliveryOf(t.db, session.id, "webhook:0", "completed");
    const payload = NotificationWebhookPayloadSchema.parse(
      JSON.parse(hook.requests[0]?.body ?? ""),
    );
    expect(payload).toMatchObject({ event: "completed", labels: ["noise"] });
  });

  test("several labels, none, and unlabelled sessions", async ({
    t,
    nats,
    slack,
    hook,
    notifiers,
  }) => {
    notifiers.push(await startTestNotifier(t, nats, { slack, webhooks: [{ url: hook.url }] }));
    const outcomes: [string[] | null, string, string][] = [
      [
        ["page", "modify_detection_rules"],
        "`page` `modify_detection_rules`",
        " [labels: page, modify_detection_rules]",
      ],
      [[], "", ""],
      [null, "", ""],
    ];
    for (const [labels, chips, suffix] of outcomes) {
      const session = await newSession(t.db);
      await reach(t.db, nats.bus, session, "in_progress");
      await reach(t.db, nats.bus, session, "completed", {
        executiveSummary: "summary",
        ...(labels !== null && { labels }),
      });
      await deliveryOf(t.db, session.id, "slack", "completed");
      await deliveryOf(t.db, session.id, "webhook:0", "completed");
      const [done] = postsFor(slack, session.id, "completed");
      expect(blockTexts(done?.blocks)[0]).toBe(
        `:white_check_mark: *Analysis Complete*${chips ? `\n*Labels:* ${chips}` : ""}`,
      );
      expect(done?.text).toBe(`Analysis Complete: kubernetes${suffix}`);
      const request = hook.requests.find((r) => r.body.includes(session.id));
      const payload = NotificationWebhookPayloadSchema.parse(JSON.parse(request?.body ?? ""));
      expect(payload.labels).toEqual(labels);
    }
  });
});

describe("webhooks", () => {
  test("a signed JSON POST of the outcome, only for the events asked for", async ({
    t,
    nats,
    hook,
    notifiers,
  }) => {
    notifiers.push(
      await startTestNotifier(t, nats, {
        webhooks: [{ url: hook.url }, { url: `${hook.url}?only=failed`, events: ["failed"] }],
      }),
    );
    const session = await newSession(t.db);
    await reach(t.db, nats.bus, session, "in_progress");
    const seq = await reach(t.db, nats.bus, session, "completed", {
      finalAnalysis: "analysis",
      executiveSummary: "summary",
    });
    await handled(nats, seq);
    const delivery = await deliveryOf(t.db, session.id, "webhook:0", "completed");
    // Default events are the four outcomes: no "started"; the second hook wants only failures.
    expect(
      (await listSessionDeliveries(t.db.prisma, session.id)).map((d) => [d.target, d.event]),
    ).toEqual([["webhook:0", "completed"]]);
    expect(hook.requests).toHaveLength(1);
    const [request] = hook.requests;
    const timestamp = String(request?.headers[WEBHOOK_HEADERS.timestamp]);
    const expected = `sha256=${createHmac("sha256", WEBHOOK_SECRET).update(`${timestamp}.${request?.body}`).digest("hex")}`;
    expect(request?.headers[WEBHOOK_HEADERS.signature]).toBe(expected);
    expect(request?.headers[WEBHOOK_HEADERS.event]).toBe("completed");
    expect(request?.headers[WEBHOOK_HEADERS.delivery]).toBe(delivery.id);
    expect(request?.headers["content-type"]).toBe("application/json");
    const payload = NotificationWebhookPayloadSchema.parse(JSON.parse(request?.body ?? ""));
    expect(payload).toMatchObject({
      event: "completed",
      delivery_id: delivery.id,
      session_id: session.id,
      status: "completed",
      alert_type: "kubernetes",
      executive_summary: "summary",
      labels: null,
      final_analysis: "analysis",
      error_message: null,
      cancelled_by: null,
      cancel_reason: null,
      url: `${DASHBOARD}/sessions/${session.id}`,
    });
  });

  test("a cancelled session's payload says who cancelled and why", async ({
    t,
    nats,
    hook,
    notifiers,
  }) => {
    notifiers.push(await startTestNotifier(t, nats, { webhooks: [{ url: hook.url }] }));
    const session = await newSession(t.db);
    await reach(t.db, nats.bus, session, "cancelled", {
      cancelledBy: "alice",
      cancelReason: "duplicate of INC-123",
    });
    await deliveryOf(t.db, session.id, "webhook:0", "cancelled");
    const payload = NotificationWebhookPayloadSchema.parse(
      JSON.parse(hook.requests[0]?.body ?? ""),
    );
    expect(payload).toMatchObject({
      event: "cancelled",
      status: "cancelled",
      cancelled_by: "alice",
      cancel_reason: "duplicate of INC-123",
    });
  });

  test("a receiver failing with 500 is retried with the same delivery id; a 4xx is not", async ({
    t,
    nats,
    hook,
    notifiers,
  }) => {
    hook.status = 500;
    notifiers.push(await startTestNotifier(t, nats, { webhooks: [{ url: hook.url }] }));
    const session = await newSession(t.db);
    await reach(t.db, nats.bus, session, "completed", { finalAnalysis: "x" });
    await deliveryOf(t.db, session.id, "webhook:0", "completed", (d) => d.attempts >= 2);
    hook.status = 200;
    const sent = await deliveryOf(t.db, session.id, "webhook:0", "completed");
    expect(sent.status).toBe("sent");
    const ids = new Set(hook.requests.map((r) => r.headers[WEBHOOK_HEADERS.delivery]));
    expect([...ids]).toEqual([sent.id]);
    expect(hook.requests.length).toBe(sent.attempts);

    hook.status = 410;
    const gone = await newSession(t.db);
    await reach(t.db, nats.bus, gone, "failed", { errorMessage: "boom" });
    expect(await deliveryOf(t.db, gone.id, "webhook:0", "failed")).toMatchObject({
      status: "failed",
      attempts: 1,
      lastError: "webhook answered HTTP 410",
    });
  });
});

describe("exactly once", () => {
  test("two replicas and redelivered events: one message per session and outcome", async ({
    t,
    nats,
    slack,
    hook,
    notifiers,
  }) => {
    const other = await nats.connectAnother();
    notifiers.push(
      await startTestNotifier(t, nats, { slack, webhooks: [{ url: hook.url }] }, { podId: "a" }),
    );
    notifiers.push(
      await startTestNotifier(
        t,
        nats,
        { slack, webhooks: [{ url: hook.url }] },
        { podId: "b" },
        other,
      ),
    );
    const sessions = await Promise.all(Array.from({ length: 8 }, () => newSession(t.db)));
    let last = 0;
    for (const session of sessions) {
      last = await reach(t.db, nats.bus, session, "completed", {
        finalAnalysis: `done ${session.id}`,
      });
    }
    await handled(nats, last);
    // The same events again, as after a lost acknowledgement (a new message id each).
    const raw = await nats.raw();
    for (const session of sessions) {
      raw.publish(
        nats.bus.subject(SESSIONS_EVENTS_SUBJECT),
        JSON.stringify({
          v: 1,
          type: "session.status",
          session_id: session.id,
          status: "completed",
          timestamp: new Date().toISOString(),
        }),
      );
    }
    await raw.flush();
    await handled(nats, await nats.admin.lastSequence(SESSIONS_EVENTS_SUBJECT));
    for (const session of sessions) {
      await deliveryOf(t.db, session.id, "slack", "completed");
      await deliveryOf(t.db, session.id, "webhook:0", "completed");
    }
    for (const session of sessions) {
      expect(postsFor(slack, session.id)).toHaveLength(1);
      expect(
        hook.requests.filter((r) => JSON.parse(r.body).session_id === session.id),
      ).toHaveLength(1);
    }
  });
});
