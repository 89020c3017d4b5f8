/**
 * Scoring and review (issue #21). Scoring: the LLM judge of a finished session, through every service. A chain's
 * `scoring.enabled` scores each completed session in an "Evaluation & Learning" stage after
 * the chain; `POST /sessions/:id/score` scores any ended session on demand. The judge's turns
 * come from testdata/scoring/llm-script.yaml, one judge agent per behaviour. Review: the
 * team's workflow over ended sessions, watched on the relay's sessions channel.
 */
import { resolve } from "node:path";
import type {
  LLMInteractionDetail,
  ReviewActivityResponse,
  ReviewStatusEvent,
  ScoreSessionResponse,
  SessionDetail,
  SessionListResponse,
  SessionScore,
  SessionStatistics,
  TraceListResponse,
  TriageGroupResponse,
  UpdateReviewResponse,
} from "@tarsy/contracts";
import { connectClient, type TestClient, until } from "@tarsy/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCORING_PROMPT_HASH } from "../../services/agent-runner/src/prompts/scoring.ts";
import { saveLogs, submitAlert, waitStatus } from "./scenario-support.ts";
import { bootSystem, type E2E, ROOT } from "./support.ts";

const DIR = resolve(ROOT, "test/e2e/testdata/scoring");

let sys: E2E;
let ws: TestClient;

const get = async <T>(path: string): Promise<T> => {
  const r = await sys.api<T>(path);
  expect(r.status, `GET ${path}`).toBe(200);
  return r.body;
};
const postScore = (id: string) =>
  sys.api<ScoreSessionResponse | { error: { code: string; message: string } }>(
    `/api/v1/sessions/${id}/score`,
    { method: "POST", headers: { "x-forwarded-user": "reviewer@example.com" } },
  );

/** Waits for the session's latest score run to end (completed or failed). */
const scoreEnded = (id: string): Promise<SessionScore> =>
  until(
    async () => {
      const r = await sys.api<SessionScore>(`/api/v1/sessions/${id}/score`);
      return r.status === 200 && r.body.status !== "in_progress" ? r.body : null;
    },
    { what: `the score of ${id} to end`, timeoutMs: 60_000 },
  );

const completed = async (alertType: string): Promise<string> => {
  const id = await submitAlert(sys, alertType);
  await waitStatus(sys, id, ["completed"], 60_000);
  return id;
};

/** The `session.score_updated` events the sessions channel carried for one session. */
const scoreEvents = (id: string) =>
  ws.frames.flatMap((f) =>
    "id" in f &&
    f.channel === "sessions" &&
    f.payload.type === "session.score_updated" &&
    f.payload.session_id === id
      ? [f.payload]
      : [],
  );

const judgeCalls = async (id: string, stageId: string) => {
  const trace = await get<TraceListResponse>(`/api/v1/sessions/${id}/trace`);
  const stage = trace.stages.find((s) => s.stage_id === stageId);
  return stage?.executions[0]?.llm_interactions ?? [];
};

beforeAll(async () => {
  sys = await bootSystem({ configDir: DIR, llmScriptPath: resolve(DIR, "llm-script.yaml") });
  ws = await connectClient(sys.stack.wsUrl);
  ws.send({ action: "subscribe", channel: "sessions" });
  await ws.waitFor((f) => f.type === "subscription.confirmed");
}, 120_000);
afterAll(async () => {
  saveLogs(sys, "scoring");
  await ws?.close();
  await sys?.stop();
});

describe("Scoring", () => {
  it("scoring.enabled: a completed session is judged in its own stage; score, analysis, failure tags and tool report reach the API and the sessions channel", async () => {
    const id = await completed("Scored");
    const score = await scoreEnded(id);
    expect(score).toMatchObject({
      session_id: id,
      status: "completed",
      total_score: 85,
      failure_tags: ["incomplete_evidence"],
      score_triggered_by: "auto",
      error_message: null,
    });
    expect(score.score_analysis).toContain("Outcome: correct");
    expect(score.score_analysis).not.toMatch(/\n85$/);
    expect(score.tool_improvement_report).toContain("A memory metrics tool");
    // The hash of the judge's templates the agent-runner ships, so scores made with other
    // prompts can be told apart.
    expect(score.prompt_hash).toBe(SCORING_PROMPT_HASH);

    // The judge's stage follows the chain; the session itself stays completed.
    const detail = await get<SessionDetail>(`/api/v1/sessions/${id}`);
    expect(detail.status).toBe("completed");
    expect(detail.stages.map((s) => [s.stage_name, s.kind, s.status])).toEqual([
      ["investigate", "investigation", "completed"],
      ["Evaluation & Learning", "scoring", "completed"],
    ]);
    expect(detail.stages[1]?.id).toBe(score.stage_id);
    expect(detail.stages[1]?.executions.map((e) => [e.agent_name, e.status])).toEqual([
      ["ScoringAgent", "completed"],
    ]);
    expect(detail).toMatchObject({ latest_score: 85, scoring_status: "completed" });
    const summary = await get<SessionStatistics>(`/api/v1/sessions/${id}/summary`);
    expect(summary).toMatchObject({ total_score: 85, scoring_status: "completed" });
    const list = await get<SessionListResponse>("/api/v1/sessions?alert_type=Scored");
    expect(list.sessions.find((s) => s.id === id)).toMatchObject({
      latest_score: 85,
      scoring_status: "completed",
    });

    // Live: in_progress, then completed with the score.
    await ws.waitFor(
      (f) =>
        "id" in f &&
        f.payload.type === "session.score_updated" &&
        f.payload.session_id === id &&
        f.payload.scoring_status === "completed",
      10_000,
    );
    expect(scoreEvents(id).map((e) => [e.scoring_status, e.total_score])).toEqual([
      ["in_progress", null],
      ["completed", 85],
    ]);

    // Two judge turns: the evaluation, then the tool report in the same conversation.
    const calls = await judgeCalls(id, score.stage_id ?? "");
    expect(calls.map((c) => c.interaction_type)).toEqual(["scoring", "scoring"]);
    const first = await get<LLMInteractionDetail>(
      `/api/v1/sessions/${id}/trace/llm/${calls[0]?.id}`,
    );
    const prompt = first.conversation.map((m) => m.content).join("\n");
    // What the judge reads: the alert, the investigation with its tool call and answer, the
    // tools the agents had, the rubric with the failure vocabulary.
    expect(prompt).toContain("**Alert type:** Scored");
    expect(prompt).toContain("payments-api is OOM-killed: raise its memory limit.");
    expect(prompt).toContain("get_pods");
    expect(prompt).toMatch(/## Available Tools[\s\S]*demo-cluster\.get_pod_logs/);
    expect(prompt).toContain("- hallucinated_evidence: cited or assumed evidence");
    // The rubric: the five dimensions the judge assesses, in order.
    expect(prompt).toMatch(
      /1\. \*\*Investigation Outcome\*\*[\s\S]*2\. \*\*Evidence Gathering\*\*[\s\S]*3\. \*\*Tool Utilization\*\*[\s\S]*4\. \*\*Analytical Reasoning\*\*[\s\S]*5\. \*\*Investigation Completeness\*\*/,
    );
    expect(prompt).toContain("Outcome: correct");
    const second = await get<LLMInteractionDetail>(
      `/api/v1/sessions/${id}/trace/llm/${calls[1]?.id}`,
    );
    expect(second.conversation.at(-1)?.content).toContain("## Part 2: Existing Tool Improvements");
  });

  it("scoring.enabled after parallel agents, their synthesis and an action stage: the judge's two calls read the synthesis and the action report; completed, needs_review, then the score, announced in order", async () => {
    const id = await submitAlert(sys, "FullChain");
    await waitStatus(sys, id, ["completed"], 60_000);
    const score = await scoreEnded(id);
    expect(score).toMatchObject({
      status: "completed",
      total_score: 90,
      score_triggered_by: "auto",
    });

    const detail = await get<SessionDetail>(`/api/v1/sessions/${id}`);
    expect(detail.status).toBe("completed");
    expect(
      detail.stages.map((s) => [
        s.stage_name,
        s.kind,
        s.status,
        s.parallel_type,
        s.actions_executed,
      ]),
    ).toEqual([
      ["investigate", "investigation", "completed", "multi_agent", null],
      ["investigate - Synthesis", "synthesis", "completed", null, null],
      ["remediate", "action", "completed", null, true],
      ["remediate - Amended Report", "compose", "completed", null, null],
      ["Evaluation & Learning", "scoring", "completed", null, null],
    ]);
    expect(detail.stages[0]?.executions.map((e) => e.agent_name)).toEqual([
      "LogReader",
      "EventReader",
    ]);
    expect(detail.stages[4]?.id).toBe(score.stage_id);
    expect(detail).toMatchObject({ latest_score: 90, scoring_status: "completed" });

    // Exactly two judge calls: the evaluation, then the tool report.
    const calls = await judgeCalls(id, score.stage_id ?? "");
    expect(calls.map((c) => c.interaction_type)).toEqual(["scoring", "scoring"]);
    const first = await get<LLMInteractionDetail>(
      `/api/v1/sessions/${id}/trace/llm/${calls[0]?.id}`,
    );
    const prompt = first.conversation.map((m) => m.content).join("\n");
    expect(prompt).toContain("LOGS: payments-api logs java.lang.OutOfMemoryError");
    expect(prompt).toContain("EVENTS: payments-api was OOMKilled 14 times");
    expect(prompt).toContain("SYNTHESIS: logs and events agree, payments-api is OOM-killed");
    expect(prompt).toContain("RAISED-LIMIT: set payments-api's memory limit to 3Gi.");
    // The compose stage's output, as one document after the timeline (not its process).
    expect(prompt).toContain(
      "## Final Analysis (amended report)\n\nSYNTHESIS: logs and events agree, payments-api is OOM-killed; its memory limit is too low.\n\n## Actions\nAMENDED: set payments-api's memory limit to 3Gi.",
    );
    expect(prompt.match(/AMENDED:/g)).toHaveLength(1);

    // Live, on the sessions channel: the session completes, enters the review queue, then its
    // score runs and ends.
    await ws.waitFor(
      (f) =>
        "id" in f &&
        f.payload.type === "session.score_updated" &&
        f.payload.session_id === id &&
        f.payload.scoring_status === "completed",
      10_000,
    );
    const events = ws.frames.flatMap((f) => {
      if (!("id" in f) || f.channel !== "sessions" || f.payload.session_id !== id) return [];
      const p = f.payload;
      if (p.type === "session.status") return [`${p.type} ${p.status}`];
      if (p.type === "review.status") return [`${p.type} ${p.review_status}`];
      if (p.type === "session.score_updated") return [`${p.type} ${p.scoring_status}`];
      return [];
    });
    expect(events.slice(events.indexOf("session.status completed"))).toEqual([
      "session.status completed",
      "review.status needs_review",
      "session.score_updated in_progress",
      "session.score_updated completed",
    ]);
  });

  it("the outcome caps the score: a wrong verdict with 80 is stored as 34", async () => {
    const id = await completed("Capped");
    const score = await scoreEnded(id);
    expect(score).toMatchObject({
      status: "completed",
      total_score: 34,
      failure_tags: ["wrong_conclusion"],
    });
  });

  it("a missing score gets a reminder; the number then given is the score", async () => {
    const id = await completed("Reminded");
    const score = await scoreEnded(id);
    expect(score).toMatchObject({
      status: "completed",
      total_score: 55,
      failure_tags: ["premature_conclusion"],
    });
    expect(score.score_analysis).toContain("weakly supported");
    const calls = await judgeCalls(id, score.stage_id ?? "");
    expect(calls).toHaveLength(3);
  });

  it("fail-open: no score after the reminders, or a refusing provider, fails the score and leaves the session completed", async () => {
    const mute = await completed("Mute");
    const broken = await completed("Broken");
    const muteScore = await scoreEnded(mute);
    expect(muteScore).toMatchObject({ status: "failed", total_score: null });
    expect(muteScore.error_message).toContain("no score");
    // One evaluation and two reminders, then no report turn.
    expect(await judgeCalls(mute, muteScore.stage_id ?? "")).toHaveLength(3);
    const brokenScore = await scoreEnded(broken);
    expect(brokenScore).toMatchObject({ status: "failed", total_score: null });
    expect(brokenScore.error_message).toContain("judge provider refused the request");
    for (const id of [mute, broken]) {
      const detail = await get<SessionDetail>(`/api/v1/sessions/${id}`);
      expect(detail.status).toBe("completed");
      expect(detail.error_message).toBeNull();
      expect(detail).toMatchObject({ latest_score: null, scoring_status: "failed" });
      expect(detail.stages.at(-1)).toMatchObject({ kind: "scoring", status: "failed" });
    }
    await ws.waitFor(
      (f) =>
        "id" in f &&
        f.payload.type === "session.score_updated" &&
        f.payload.session_id === broken &&
        f.payload.scoring_status === "failed",
      10_000,
    );
  });

  it("on demand: POST /score scores a session whose chain does not (202, then 409 while it runs), by the caller", async () => {
    const id = await completed("Manual");
    // Automatic scoring is decided in the transaction that completed the session: none here.
    expect((await sys.api(`/api/v1/sessions/${id}/score`)).status).toBe(404);
    const unscored = await get<SessionDetail>(`/api/v1/sessions/${id}`);
    expect(unscored.stages).toHaveLength(1);
    expect(unscored).toMatchObject({ latest_score: null, scoring_status: null });

    const accepted = await postScore(id);
    expect(accepted.status).toBe(202);
    const scoreId = (accepted.body as ScoreSessionResponse).score_id;
    const again = await postScore(id);
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ error: { code: "scoring_in_progress" } });

    const score = await scoreEnded(id);
    expect(score).toMatchObject({
      id: scoreId,
      status: "completed",
      total_score: 70,
      score_triggered_by: "reviewer@example.com",
    });
    const detail = await get<SessionDetail>(`/api/v1/sessions/${id}`);
    expect(detail.stages.at(-1)?.executions[0]?.agent_name).toBe("JudgeSlow");

    // A re-score is a new run; the latest one is what the session shows.
    const rescore = await postScore(id);
    expect(rescore.status).toBe(202);
    const second = await scoreEnded(id);
    expect(second.id).toBe((rescore.body as ScoreSessionResponse).score_id);
    expect(second.id).not.toBe(scoreId);
    const stages = (await get<SessionDetail>(`/api/v1/sessions/${id}`)).stages;
    expect(stages.filter((s) => s.kind === "scoring")).toHaveLength(2);
  });

  it("on demand: a cancelled and a failed session are scored too (202), and stay cancelled and failed", async () => {
    const cancelled = await submitAlert(sys, "Slow");
    await waitStatus(sys, cancelled, ["in_progress"], 30_000);
    const cancel = await sys.api(`/api/v1/sessions/${cancelled}/cancel`, {
      method: "POST",
      headers: { "x-forwarded-user": "alice@example.com" },
    });
    expect(cancel.status).toBe(202);
    await waitStatus(sys, cancelled, ["cancelled"], 30_000);
    const failed = await submitAlert(sys, "Failing");
    await waitStatus(sys, failed, ["failed"], 60_000);

    for (const [id, status] of [
      [cancelled, "cancelled"],
      [failed, "failed"],
    ] as const) {
      const accepted = await postScore(id);
      expect(accepted.status, `POST /score of the ${status} session`).toBe(202);
      const score = await scoreEnded(id);
      expect(score).toMatchObject({
        id: (accepted.body as ScoreSessionResponse).score_id,
        status: "completed",
        total_score: 85,
        score_triggered_by: "reviewer@example.com",
      });
      const detail = await get<SessionDetail>(`/api/v1/sessions/${id}`);
      expect(detail.status).toBe(status);
      expect(detail.stages.at(-1)).toMatchObject({
        id: score.stage_id,
        kind: "scoring",
        status: "completed",
      });
      expect(detail).toMatchObject({ latest_score: 85, scoring_status: "completed" });
    }
  });

  it("bad requests: a running session (409 session_not_terminal), an unknown session (404); nothing stored", async () => {
    const id = await submitAlert(sys, "Slow");
    await waitStatus(sys, id, ["in_progress"], 30_000);
    const running = await postScore(id);
    expect(running.status).toBe(409);
    expect(running.body).toMatchObject({ error: { code: "session_not_terminal" } });
    expect((await sys.api(`/api/v1/sessions/${id}/score`)).status).toBe(404);
    const unknown = await postScore("00000000-0000-4000-8000-000000000000");
    expect(unknown.status).toBe(404);
    await waitStatus(sys, id, ["completed"], 60_000);
  });
});

describe("Review", () => {
  const patch = (body: Record<string, unknown>, user = "alice@example.com") =>
    sys.api<UpdateReviewResponse>("/api/v1/sessions/review", {
      method: "PATCH",
      headers: { "x-forwarded-user": user },
      body: JSON.stringify(body),
    });
  /** Resolves with the next `review.status` of the session matching `predicate`. */
  const reviewEvent = async (
    id: string,
    predicate: (e: ReviewStatusEvent) => boolean,
  ): Promise<ReviewStatusEvent> => {
    const frame = await ws.waitFor(
      (f) =>
        "id" in f &&
        f.channel === "sessions" &&
        f.payload.type === "review.status" &&
        f.payload.session_id === id &&
        predicate(f.payload),
      10_000,
    );
    return (frame as { payload: ReviewStatusEvent }).payload;
  };
  const activity = async (id: string) =>
    (await get<ReviewActivityResponse>(`/api/v1/sessions/${id}/review-activity`)).activities;
  const inGroup = async (group: string, id: string) =>
    (
      await get<TriageGroupResponse>(`/api/v1/sessions/triage/${group}?page_size=200`)
    ).sessions.some((s) => s.id === id);

  it("a completed session needs review (announced by the system); claim, then complete with a rating: stored, announced, logged, triaged", async () => {
    const id = await completed("Manual");
    await reviewEvent(id, (e) => e.review_status === "needs_review" && e.actor === "system");
    expect(await inGroup("needs_review", id)).toBe(true);

    expect((await patch({ session_ids: [id], action: "claim" })).body.results).toEqual([
      expect.objectContaining({ session_id: id, success: true }),
    ]);
    await reviewEvent(id, (e) => e.review_status === "in_progress");
    expect(await inGroup("in_progress", id)).toBe(true);

    const done = await patch({
      session_ids: [id],
      action: "complete",
      quality_rating: "accurate",
      action_taken: "Raised the memory limit to 3Gi.",
    });
    expect(done.body.results[0]).toMatchObject({ success: true });
    const event = await reviewEvent(id, (e) => e.review_status === "reviewed");
    expect(event).toMatchObject({
      assignee: "alice@example.com",
      quality_rating: "accurate",
      action_taken: "Raised the memory limit to 3Gi.",
      actor: "alice@example.com",
    });
    expect(await get<SessionDetail>(`/api/v1/sessions/${id}`)).toMatchObject({
      review_status: "reviewed",
      quality_rating: "accurate",
      action_taken: "Raised the memory limit to 3Gi.",
    });
    expect((await activity(id)).map((a) => [a.action, a.from_status, a.to_status])).toEqual([
      ["claim", "needs_review", "in_progress"],
      ["complete", "in_progress", "reviewed"],
    ]);
    expect(await inGroup("reviewed", id)).toBe(true);
  });

  it("acknowledged, then rated, then acknowledged again: the rating comes and goes, each step logged", async () => {
    const id = await completed("Manual");
    await reviewEvent(id, (e) => e.review_status === "needs_review");
    await patch({ session_ids: [id], action: "acknowledge" }, "bob@example.com");
    await reviewEvent(id, (e) => e.review_status === "reviewed" && e.actor === "bob@example.com");
    expect(await get<SessionDetail>(`/api/v1/sessions/${id}`)).toMatchObject({
      review_status: "reviewed",
      quality_rating: null,
      assignee: "bob@example.com",
    });
    await patch({ session_ids: [id], action: "complete", quality_rating: "inaccurate" });
    await reviewEvent(id, (e) => e.quality_rating === "inaccurate");
    await patch({ session_ids: [id], action: "acknowledge" });
    const cleared = await until(
      async () => {
        const d = await get<SessionDetail>(`/api/v1/sessions/${id}`);
        return d.quality_rating === null ? d : null;
      },
      { what: "the rating to be cleared", timeoutMs: 10_000 },
    );
    expect(cleared.review_status).toBe("reviewed");
    expect((await activity(id)).map((a) => [a.action, a.quality_rating])).toEqual([
      ["claim", null],
      ["acknowledge", null],
      ["complete", "inaccurate"],
      ["acknowledge", null],
    ]);
  });

  it("a cancelled session is reviewed by the system, without a rating, and shows in the reviewed group", async () => {
    const id = await submitAlert(sys, "Slow");
    await waitStatus(sys, id, ["in_progress"], 30_000);
    const cancel = await sys.api(`/api/v1/sessions/${id}/cancel`, {
      method: "POST",
      headers: { "x-forwarded-user": "alice@example.com" },
    });
    expect(cancel.status).toBe(202);
    await waitStatus(sys, id, ["cancelled"], 30_000);
    const event = await reviewEvent(id, (e) => e.review_status === "reviewed");
    expect(event).toMatchObject({ actor: "system", quality_rating: null, assignee: null });
    expect(await inGroup("reviewed", id)).toBe(true);
  });
});
