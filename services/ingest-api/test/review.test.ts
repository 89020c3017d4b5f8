import { newApiToken } from "@tarsy/authz";
import {
  AuditListResponseSchema,
  type ReviewActivityResponse,
  ReviewActivityResponseSchema,
  type ReviewStatusEvent,
  SESSIONS_EVENTS_SUBJECT,
  type SessionListResponse,
  type SessionSummary,
  sessionEventsSubject,
  type TriageGroupResponse,
  TriageGroupResponseSchema,
  type UpdateReviewResponse,
  UpdateReviewResponseSchema,
} from "@tarsy/contracts";
import { createApiToken, softDeleteSession } from "@tarsy/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { finishSession, seedSession, startSession } from "./seed.ts";
import {
  AUTHZ_CONFIG_DIR,
  conforms,
  type ErrorBody,
  type Harness,
  request,
  startHarness,
} from "./support.ts";

const UNKNOWN = "00000000-0000-4000-8000-000000000000";

type Headers = Record<string, string>;
const user = (name: string): Headers => ({ "x-forwarded-user": name });

const review = (h: Harness, body: unknown, headers: Headers = user("alice")) =>
  request<UpdateReviewResponse & ErrorBody>(`${h.url}/api/v1/sessions/review`, {
    method: "PATCH",
    body,
    headers,
  });

const activity = async (h: Harness, id: string, headers: Headers = {}) => {
  const res = await request<ReviewActivityResponse>(
    `${h.url}/api/v1/sessions/${id}/review-activity`,
    { headers },
  );
  expect(res.status).toBe(200);
  conforms(ReviewActivityResponseSchema, res.body);
  return res.body.activities;
};

const detail = async (h: Harness, id: string) =>
  (await request<SessionSummary>(`${h.url}/api/v1/sessions/${id}`)).body;

const ended = async (
  h: Harness,
  status: "completed" | "failed" | "timed_out" | "cancelled" = "completed",
  input: { project?: string } = {},
) => {
  const s = await seedSession(h.db.prisma, input);
  await finishSession(h.db.prisma, s.id, status);
  return s.id;
};

/** The `review.status` events stored on a subject for one session. */
const reviewEvents = async (h: Harness, subject: string, id: string) => {
  const { events } = await h.bus.replayEvents({ subject, afterSeq: 0, limit: 10_000 });
  return events
    .map((e) => e.payload)
    .filter((p): p is ReviewStatusEvent => p.type === "review.status" && p.session_id === id);
};

describe("the review workflow (authorization off)", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  it("a session that ends needs review; a cancelled one starts as reviewed without rating or assignee; a running one has no review", async () => {
    const done = await ended(h, "completed");
    const failed = await ended(h, "failed");
    const cancelled = await ended(h, "cancelled");
    const running = (await seedSession(h.db.prisma)).id;
    await startSession(h.db.prisma, running);

    expect((await detail(h, done)).review_status).toBe("needs_review");
    expect((await detail(h, failed)).review_status).toBe("needs_review");
    const c = await detail(h, cancelled);
    expect(c).toMatchObject({
      review_status: "reviewed",
      quality_rating: null,
      assignee: null,
      action_taken: null,
    });
    expect(c.reviewed_at).not.toBeNull();
    expect((await detail(h, running)).review_status).toBeNull();
    // The system's initial state writes no activity row.
    expect(await activity(h, done)).toEqual([]);
  });

  it("claim, unclaim, claim, complete, update_feedback, reopen, acknowledge: each state, and the activity log with the caller as actor", async () => {
    const id = await ended(h);
    const step = async (body: Record<string, unknown>, who = "alice") => {
      const res = await review(h, { session_ids: [id], ...body }, user(who));
      expect(res.status).toBe(200);
      conforms(UpdateReviewResponseSchema, res.body);
      expect(res.body.results).toHaveLength(1);
      const [r] = res.body.results;
      expect(r?.success, r?.error).toBe(true);
      return r?.review;
    };

    expect(await step({ action: "claim" })).toMatchObject({
      review_status: "in_progress",
      assignee: "alice",
    });
    expect(await step({ action: "unclaim" })).toMatchObject({
      review_status: "needs_review",
      assignee: null,
      assigned_at: null,
    });
    await step({ action: "claim" }, "bob");
    const completed = await step({
      action: "complete",
      quality_rating: "partially_accurate",
      action_taken: "restarted the pod",
      investigation_feedback: "missed the OOM",
    });
    // Completed by alice, but bob had claimed it: he stays the assignee.
    expect(completed).toMatchObject({
      review_status: "reviewed",
      assignee: "bob",
      quality_rating: "partially_accurate",
      action_taken: "restarted the pod",
      investigation_feedback: "missed the OOM",
    });
    expect(completed?.reviewed_at).not.toBeNull();
    // Omitted fields stay as they were.
    expect(await step({ action: "update_feedback", quality_rating: "accurate" })).toMatchObject({
      review_status: "reviewed",
      quality_rating: "accurate",
      action_taken: "restarted the pod",
      investigation_feedback: "missed the OOM",
    });
    expect(await step({ action: "reopen" }, "carol")).toEqual({
      review_status: "needs_review",
      assignee: null,
      assigned_at: null,
      reviewed_at: null,
      quality_rating: null,
      action_taken: null,
      investigation_feedback: null,
    });
    // Acknowledge straight from the queue: reviewed, no rating, the acknowledger assigned.
    expect(await step({ action: "acknowledge" }, "dave")).toMatchObject({
      review_status: "reviewed",
      assignee: "dave",
      quality_rating: null,
    });
    // The detail says the same as the last result.
    expect(await detail(h, id)).toMatchObject({ review_status: "reviewed", assignee: "dave" });

    const log = await activity(h, id);
    expect(
      log.map((a) => [a.actor, a.action, a.from_status, a.to_status, a.quality_rating, a.note]),
    ).toEqual([
      ["alice", "claim", "needs_review", "in_progress", null, null],
      ["alice", "unclaim", "in_progress", "needs_review", null, null],
      ["bob", "claim", "needs_review", "in_progress", null, null],
      ["alice", "complete", "in_progress", "reviewed", "partially_accurate", "restarted the pod"],
      ["alice", "update_feedback", "reviewed", "reviewed", "accurate", "restarted the pod"],
      ["carol", "reopen", "reviewed", "needs_review", null, null],
      // The implicit claim of a direct acknowledge, then the acknowledge.
      ["dave", "claim", "needs_review", "in_progress", null, null],
      ["dave", "acknowledge", "in_progress", "reviewed", null, null],
    ]);
    expect(log[3]?.investigation_feedback).toBe("missed the OOM");
  });

  it("complete straight from needs_review assigns the reviewer and logs the implicit claim first", async () => {
    const id = await ended(h, "timed_out");
    const res = await review(
      h,
      { session_ids: [id], action: "complete", quality_rating: "inaccurate" },
      user("erin"),
    );
    expect(res.body.results[0]).toMatchObject({
      success: true,
      review: { review_status: "reviewed", assignee: "erin", quality_rating: "inaccurate" },
    });
    const log = await activity(h, id);
    expect(log.map((a) => [a.action, a.from_status, a.to_status, a.quality_rating])).toEqual([
      ["claim", "needs_review", "in_progress", null],
      ["complete", "in_progress", "reviewed", "inaccurate"],
    ]);
  });

  it("an action the state does not allow is a per-session conflict that changes nothing; taking over a claim needs reassign", async () => {
    const queued = await ended(h);
    const claimed = await ended(h);
    await review(h, { session_ids: [claimed], action: "claim" }, user("alice"));
    const reviewed = await ended(h, "cancelled");
    const running = (await seedSession(h.db.prisma)).id;
    await startSession(h.db.prisma, running);

    const conflictOf = async (id: string, body: Record<string, unknown>, who = "bob") => {
      const res = await review(h, { session_ids: [id], ...body }, user(who));
      expect(res.status).toBe(200);
      const [r] = res.body.results;
      expect(r?.success).toBe(false);
      expect(r?.error).toMatch(/^conflict: /);
      return r?.error;
    };
    expect(await conflictOf(queued, { action: "unclaim" })).toContain("needs_review");
    expect(await conflictOf(queued, { action: "reopen" })).toContain("needs_review");
    expect(await conflictOf(queued, { action: "update_feedback", action_taken: "x" })).toContain(
      "needs_review",
    );
    expect(await conflictOf(claimed, { action: "reopen" })).toContain("in_progress");
    expect(await conflictOf(claimed, { action: "claim" })).toContain("claimed by alice");
    expect(await conflictOf(claimed, { action: "claim" }, "alice")).toContain("already claimed");
    expect(await conflictOf(reviewed, { action: "claim" })).toContain("reviewed");
    expect(await conflictOf(reviewed, { action: "unclaim" })).toContain("reviewed");
    expect(
      await conflictOf(reviewed, { action: "complete", quality_rating: "accurate" }),
    ).toContain("reviewed");
    expect(await conflictOf(reviewed, { action: "acknowledge" })).toContain("reviewed");
    expect(await conflictOf(running, { action: "claim" })).toContain("still being investigated");
    expect(await conflictOf(running, { action: "acknowledge" })).toContain(
      "still being investigated",
    );
    // Nothing changed, nothing was logged beyond alice's claim.
    expect((await detail(h, queued)).review_status).toBe("needs_review");
    expect((await detail(h, claimed)).assignee).toBe("alice");
    expect((await activity(h, queued)).length).toBe(0);
    expect((await activity(h, claimed)).length).toBe(1);
    expect((await activity(h, running)).length).toBe(0);

    // With reassign, bob takes it over (logged in_progress → in_progress).
    const took = await review(
      h,
      { session_ids: [claimed], action: "claim", reassign: true },
      user("bob"),
    );
    expect(took.body.results[0]).toMatchObject({
      success: true,
      review: { review_status: "in_progress", assignee: "bob" },
    });
    expect((await activity(h, claimed)).map((a) => [a.actor, a.from_status, a.to_status])).toEqual([
      ["alice", "needs_review", "in_progress"],
      ["bob", "in_progress", "in_progress"], // wire-literal: review states (a reassignment)
    ]);
  });

  it("a bulk request applies to each session alone: applied, conflict, not_found (unknown, deleted, malformed) and a duplicate, in order", async () => {
    const a = await ended(h);
    const b = await ended(h);
    const reviewed = await ended(h, "cancelled");
    const deleted = await ended(h);
    await softDeleteSession(h.db.prisma, deleted);
    const ids = [a, reviewed, UNKNOWN, b, deleted, "not-a-uuid", a];
    const res = await review(h, { session_ids: ids, action: "claim" }, user("frank"));
    expect(res.status).toBe(200);
    conforms(UpdateReviewResponseSchema, res.body);
    expect(res.body.results.map((r) => [r.session_id, r.success, r.error?.split(":")[0]])).toEqual([
      [a, true, undefined],
      [reviewed, false, "conflict"],
      [UNKNOWN, false, "not_found"],
      [b, true, undefined],
      [deleted, false, "not_found"],
      ["not-a-uuid", false, "not_found"],
      [a, false, "duplicate"],
    ]);
    expect((await detail(h, a)).assignee).toBe("frank");
    expect((await detail(h, b)).assignee).toBe("frank");
    expect((await detail(h, reviewed)).assignee).toBeNull();
  });

  it("invalid requests are a 400 with the error shape and change nothing", async () => {
    const id = await ended(h);
    const cases: Array<[unknown, string]> = [
      [
        {
          session_ids: Array.from({ length: 51 }, () => crypto.randomUUID()),
          action: "claim",
        },
        "session_ids",
      ],
      [{ session_ids: [], action: "claim" }, "session_ids"],
      [{ session_ids: [id], action: "complete" }, "quality_rating"],
      [{ session_ids: [id], action: "complete", quality_rating: "great" }, "quality_rating"],
      [{ session_ids: [id], action: "resolve" }, "action"],
      [{ session_ids: [id], action: "update_feedback" }, "action"],
      [{ session_ids: [id], action: "claim", actor: "mallory" }, ""],
    ];
    for (const [body, field] of cases) {
      const res = await review(h, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe("validation_failed");
      expect(typeof res.body.error.message).toBe("string");
      expect(JSON.stringify(res.body.error.details)).toContain(field);
    }
    // Not JSON at all.
    const raw = await request<ErrorBody>(`${h.url}/api/v1/sessions/review`, {
      method: "PATCH",
      rawBody: "claim it",
      headers: { "content-type": "text/plain" },
    });
    expect(raw.status).toBe(415);
    expect((await detail(h, id)).review_status).toBe("needs_review");
    expect(await activity(h, id)).toEqual([]);
  });

  it("two reviewers racing to claim one session: exactly one wins, one activity row", async () => {
    for (let round = 0; round < 3; round++) {
      const id = await ended(h);
      const racers = ["gina", "hugo", "ivan", "judy"];
      const results = await Promise.all(
        racers.map((who) => review(h, { session_ids: [id], action: "claim" }, user(who))),
      );
      const winners = results.filter((r) => r.body.results[0]?.success);
      expect(winners).toHaveLength(1);
      for (const loser of results.filter((r) => !r.body.results[0]?.success)) {
        expect(loser.body.results[0]?.error).toMatch(/^conflict: /);
      }
      const winner = winners[0]?.body.results[0]?.review?.assignee;
      expect((await detail(h, id)).assignee).toBe(winner);
      const log = await activity(h, id);
      expect(log.map((a) => [a.actor, a.action])).toEqual([[winner, "claim"]]);
    }
  });

  it("each change is a review.status event on the session's channel and the sessions channel, with the actor and the activity", async () => {
    const id = await ended(h);
    await review(
      h,
      { session_ids: [id], action: "complete", quality_rating: "accurate", action_taken: "none" },
      user("kate"),
    );
    const [, done] = await activity(h, id);
    for (const subject of [sessionEventsSubject(id), SESSIONS_EVENTS_SUBJECT]) {
      const events = (await reviewEvents(h, subject, id)).filter((e) => e.actor !== "system");
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        type: "review.status",
        session_id: id,
        review_status: "reviewed",
        assignee: "kate",
        quality_rating: "accurate",
        action_taken: "none",
        actor: "kate",
        activity_id: done?.id,
      });
    }
  });

  it("GET /sessions filters by review_status (comma-separated) and assignee", async () => {
    const tag = `filter-${crypto.randomUUID()}`;
    const mine = await ended(h);
    const theirs = await ended(h);
    const queued = await ended(h);
    const cancelled = await ended(h, "cancelled");
    await review(h, { session_ids: [mine], action: "claim" }, user(tag));
    await review(h, { session_ids: [theirs], action: "claim" }, user(`${tag}-other`));
    const list = async (query: string) => {
      const res = await request<SessionListResponse>(`${h.url}/api/v1/sessions?${query}`);
      expect(res.status).toBe(200);
      return res.body.sessions.map((s) => s.id);
    };
    expect(await list(`assignee=${tag}`)).toEqual([mine]);
    const byState = await list("review_status=needs_review,reviewed&page_size=1000");
    expect(byState).toContain(queued);
    expect(byState).toContain(cancelled);
    expect(byState).not.toContain(mine);
    expect(await list(`review_status=in_progress&assignee=${tag}-other`)).toEqual([theirs]);
    const bad = await request<ErrorBody>(`${h.url}/api/v1/sessions?review_status=resolved`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("validation_failed");
  });

  it("GET /sessions/:id/review-activity is 404 for an unknown session", async () => {
    const res = await request<ErrorBody>(`${h.url}/api/v1/sessions/${UNKNOWN}/review-activity`);
    expect([res.status, res.body.error.code]).toEqual([404, "not_found"]);
  });
});

describe("triage groups", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  const group = async (name: string, query = "") => {
    const res = await request<TriageGroupResponse & ErrorBody>(
      `${h.url}/api/v1/sessions/triage/${name}${query}`,
    );
    return res;
  };
  const idsOf = (res: { body: TriageGroupResponse }) => res.body.sessions.map((s) => s.id);

  it("investigating, needs_review, in_progress, reviewed: counts, most recently ended first, pages, and the assignee filter", async () => {
    const pending = (await seedSession(h.db.prisma)).id;
    const running = (await seedSession(h.db.prisma)).id;
    await startSession(h.db.prisma, running);
    // Ended in this order: q1 first, q3 last.
    const q1 = await ended(h);
    const q2 = await ended(h, "failed");
    const q3 = await ended(h);
    const c1 = await ended(h);
    const c2 = await ended(h);
    const r1 = await ended(h, "cancelled");
    await review(h, { session_ids: [c1], action: "claim" }, user("lena"));
    await review(h, { session_ids: [c2], action: "claim" }, user("mike"));

    const investigating = await group("investigating");
    expect(investigating.status).toBe(200);
    conforms(TriageGroupResponseSchema, investigating.body);
    expect(idsOf(investigating)).toEqual([running, pending]);
    expect(investigating.body.count).toBe(2);

    const needs = await group("needs_review");
    expect(idsOf(needs)).toEqual([q3, q2, q1]);
    expect(needs.body).toMatchObject({ group: "needs_review", count: 3, total_pages: 1 });
    // The rows carry the list's aggregates and review fields.
    expect(needs.body.sessions[0]).toMatchObject({
      review_status: "needs_review",
      total_tokens: 0,
    });

    const page1 = await group("needs_review", "?page_size=2");
    const page2 = await group("needs_review", "?page_size=2&page=2");
    expect(idsOf(page1)).toEqual([q3, q2]);
    expect(idsOf(page2)).toEqual([q1]);
    expect(page2.body).toMatchObject({ count: 3, page: 2, page_size: 2, total_pages: 2 });

    expect(idsOf(await group("in_progress"))).toEqual([c2, c1]);
    expect(idsOf(await group("in_progress", "?assignee=lena"))).toEqual([c1]);
    expect(idsOf(await group("in_progress", "?assignee=nobody"))).toEqual([]);
    // An empty assignee means unassigned.
    expect(idsOf(await group("needs_review", "?assignee="))).toEqual([q3, q2, q1]);
    expect(idsOf(await group("in_progress", "?assignee="))).toEqual([]);
    expect(idsOf(await group("reviewed"))).toEqual([r1]);

    // A review moves the session between groups.
    await review(h, { session_ids: [q1], action: "acknowledge" }, user("lena"));
    expect(idsOf(await group("reviewed"))).toEqual([r1, q1]);
    expect(idsOf(await group("needs_review"))).toEqual([q3, q2]);
    expect(idsOf(await group("reviewed", "?assignee=lena"))).toEqual([q1]);
  });

  it("an unknown group or bad paging is a 400 with the error shape", async () => {
    for (const [name, query] of [
      ["resolved", ""],
      ["everything", ""],
      ["needs_review", "?page=0"],
      ["needs_review", "?page_size=500"],
      ["needs_review", "?sort=asc"],
    ] as const) {
      const res = await group(name, query);
      expect(res.status, `${name}${query}`).toBe(400);
      expect(res.body.error.code).toBe("validation_failed");
    }
  });
});

describe("the review workflow (authorization on)", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ configDir: AUTHZ_CONFIG_DIR });
  });
  afterAll(async () => {
    await h?.close();
  });
  const as = (name: string, groups: string) => ({
    "x-forwarded-user": name,
    "x-forwarded-groups": groups,
  });
  const VIEWER = as("vera", "viewers-a");
  const OPERATOR = as("olga", "operators-a");
  const ADMIN = as("adam", "admins");

  it("an operator reviews in their project (audited, actor from the identity); a viewer's result is forbidden; another project's session is not_found; triage shows only visible projects", async () => {
    const a = await ended(h, "completed", { project: "team-a" });
    const b = await ended(h, "completed", { project: "team-b" });

    const mixed = await review(h, { session_ids: [a, b], action: "claim" }, OPERATOR);
    expect(mixed.status).toBe(200);
    expect(mixed.body.results.map((r) => [r.session_id, r.success, r.error])).toEqual([
      [a, true, undefined],
      [b, false, "not_found"],
    ]);
    expect(mixed.body.results[0]?.review?.assignee).toBe("olga");

    const viewer = await review(h, { session_ids: [a], action: "unclaim" }, VIEWER);
    expect(viewer.status).toBe(200);
    expect(viewer.body.results[0]?.success).toBe(false);
    expect(viewer.body.results[0]?.error).toMatch(/^forbidden/);

    const nobody = await review(h, { session_ids: [a], action: "unclaim" }, {});
    expect(nobody.status).toBe(401);

    // The team-b session is unchanged and its history hidden from the operator.
    expect((await activity(h, b, ADMIN)).length).toBe(0);
    const hidden = await request<ErrorBody>(`${h.url}/api/v1/sessions/${b}/review-activity`, {
      headers: OPERATOR,
    });
    expect(hidden.status).toBe(404);
    expect((await activity(h, a, VIEWER)).map((x) => [x.actor, x.action])).toEqual([
      ["olga", "claim"],
    ]);

    const triage = async (headers: Headers) =>
      (
        await request<TriageGroupResponse>(`${h.url}/api/v1/sessions/triage/needs_review`, {
          headers,
        })
      ).body.sessions.map((s) => s.id);
    expect(await triage(OPERATOR)).not.toContain(b);
    expect(await triage(ADMIN)).toContain(b);

    // The audit log has the operator's review and the viewer's refused one.
    let entries: Array<Record<string, unknown>> = [];
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline) {
      const audit = await request<{ entries: Array<Record<string, unknown>> }>(
        `${h.url}/api/v1/audit`,
        { headers: ADMIN },
      );
      conforms(AuditListResponseSchema, audit.body);
      entries = audit.body.entries.filter((e) => e.method === "PATCH");
      if (entries.length >= 3) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(entries.filter((e) => e.status === 401).map((e) => [e.action, e.outcome])).toEqual([
      ["update", "denied"],
    ]);
    expect(
      entries
        .filter((e) => e.status !== 401)
        .map((e) => [e.actor, e.action, e.outcome, e.status, e.path, e.session_id])
        .sort(),
    ).toEqual([
      ["olga", "update", "allowed", 200, "/api/v1/sessions/review", null],
      ["vera", "update", "allowed", 200, "/api/v1/sessions/review", a],
    ]);
    const olga = entries.find((e) => e.actor === "olga");
    expect(olga?.reason).toBe("review claim: 1/2 applied");
    const vera = entries.find((e) => e.actor === "vera");
    expect(vera?.reason).toBe("review unclaim: 0/1 applied");
  });
  it("with an API token the actor is the token (token:<name>), in the result, the history and the event", async () => {
    const id = await ended(h, "completed", { project: "team-a" });
    const { token, hash } = newApiToken();
    await createApiToken(h.db.prisma, {
      name: "triage-bot",
      tokenHash: hash,
      project: "team-a",
      role: "operator-a",
      createdBy: "test",
      expiresAt: null,
    });
    const bearer = { authorization: `Bearer ${token}` };
    const res = await review(h, { session_ids: [id], action: "acknowledge" }, bearer);
    expect(res.body.results[0]).toMatchObject({
      success: true,
      review: { review_status: "reviewed", assignee: "token:triage-bot", quality_rating: null },
    });
    expect((await activity(h, id, bearer)).map((a) => [a.actor, a.action])).toEqual([
      ["token:triage-bot", "claim"],
      ["token:triage-bot", "acknowledge"],
    ]);
    const [event] = await reviewEvents(h, SESSIONS_EVENTS_SUBJECT, id).then((e) =>
      e.filter((x) => x.actor !== "system"),
    );
    expect(event).toMatchObject({ actor: "token:triage-bot", review_status: "reviewed" });
  });
});
