/**
 * Scoring (issue #21): the LLM judge of a finished session, through every service. A chain's
 * `scoring.enabled` scores each completed session in an "Evaluation & Learning" stage after
 * the chain; `POST /sessions/:id/score` scores any ended session on demand. The judge's turns
 * come from testdata/scoring/llm-script.yaml, one judge agent per behaviour.
 */
import { resolve } from "node:path";
import type {
  LLMInteractionDetail,
  ScoreSessionResponse,
  SessionDetail,
  SessionListResponse,
  SessionScore,
  SessionStatistics,
  TraceListResponse,
} from "@tarsy/contracts";
import { connectClient, type TestClient } from "@tarsy/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { saveLogs, submitAlert, waitStatus } from "./scenario-support.ts";
import { bootSystem, type E2E, ROOT, until } from "./support.ts";

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
    60_000,
    `the score of ${id} to end`,
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
    expect(score.prompt_hash).toMatch(/^[0-9a-f]{64}$/);

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
    expect(prompt).toContain("Outcome: correct");
    const second = await get<LLMInteractionDetail>(
      `/api/v1/sessions/${id}/trace/llm/${calls[1]?.id}`,
    );
    expect(second.conversation.at(-1)?.content).toContain("## Part 2: Existing Tool Improvements");
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
