/**
 * The compose stage (ADR-0025), through every service with a scripted LLM, a loopback OpenAI
 * fake that refuses every call and a loopback webhook receiver. After a successful action
 * stage, "{stage} - Amended Report" merges the investigation report and the action memo in
 * one call on its own model; its output is the session's final analysis, what the executive
 * summary reads and what the notification carries. When the call fails it falls back to a
 * provider of its own, and failing outright it leaves the two documents concatenated.
 */
import { resolve } from "node:path";
import {
  type LLMInteractionDetail,
  NotificationWebhookPayloadSchema,
  type SessionDetail,
  type TimelineResponse,
  type TraceListResponse,
} from "@tarsy/contracts";
import { startWebhookReceiver, until, type WebhookReceiver } from "@tarsy/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeProvider, startFakeProvider } from "../../llm-service/test/fakes/http.ts";
import { openAiError } from "../../llm-service/test/fakes/openai.ts";
import { saveLogs, submitAlert, waitStatus } from "./scenario-support.ts";
import { bootSystem, type E2E, ROOT } from "./support.ts";

const DIR = resolve(ROOT, "test/e2e/testdata/compose");

const INVESTIGATION =
  "## Findings\npayments-api is OOM-killed (14 restarts).\n\n## Recommendations\n- Restart payments-api.\n- Raise its memory limit.";
const COMPOSED =
  "## Findings\npayments-api is OOM-killed (14 restarts).\n\n## Recommendations\n- ~~Restart payments-api.~~ Done.\n- Raise its memory limit.\n\n## Actions\nRestarted payments-api-7f9c6d5b8-x2kqz.";

let sys: E2E;
let hook: WebhookReceiver;
let openai: FakeProvider;

const get = async <T>(path: string): Promise<T> => {
  const r = await sys.api<T>(path);
  expect(r.status, `GET ${path}`).toBe(200);
  return r.body;
};

const ended = async (alertType: string, status: string): Promise<SessionDetail> => {
  const id = await submitAlert(sys, alertType);
  await waitStatus(sys, id, [status], 25_000);
  return get<SessionDetail>(`/api/v1/sessions/${id}`);
};

/** Every message of the first LLM call of a stage, or of the session's own (summary) call. */
const prompt = async (sessionId: string, where: { stageId?: string; type?: string }) => {
  const trace = await get<TraceListResponse>(`/api/v1/sessions/${sessionId}/trace`);
  const call = where.stageId
    ? trace.stages.find((s) => s.stage_id === where.stageId)?.executions[0]?.llm_interactions[0]
    : trace.session_interactions.find((c) => c.interaction_type === where.type);
  expect(call, `an LLM call of ${JSON.stringify(where)}`).toBeDefined();
  const detail = await get<LLMInteractionDetail>(
    `/api/v1/sessions/${sessionId}/trace/llm/${call?.id}`,
  );
  const of = (role: string) =>
    detail.conversation
      .filter((m) => m.role === role)
      .map((m) => m.content)
      .join("\n");
  return {
    type: detail.interaction_type,
    system: of("system"),
    user: of("user"),
    text: detail.conversation.map((m) => m.content),
    response: detail.response_text,
  };
};

const timelineOf = async (sessionId: string, stageId: string | undefined) => {
  const { events } = await get<TimelineResponse>(`/api/v1/sessions/${sessionId}/timeline`);
  return events.filter((e) => e.stage_id === stageId);
};

const shape = (session: SessionDetail) =>
  session.stages.map((s) => [s.stage_name, s.kind, s.status, s.actions_executed]);

beforeAll(async () => {
  hook = await startWebhookReceiver();
  // The compose model of one chain: every call refused with bad credentials.
  openai = await startFakeProvider(async (res) => {
    res.writeHead(401, { "content-type": "application/json" });
    res.end(JSON.stringify(openAiError("invalid_request_error", "Incorrect API key provided")));
  });
  sys = await bootSystem({
    configDir: DIR,
    llmScriptPath: resolve(DIR, "llm-script.yaml"),
    env: {
      FAKE_WEBHOOK_URL: hook.url,
      FAKE_OPENAI_URL: openai.url,
      FAKE_OPENAI_KEY: "sk-fake",
      NOTIFIER_RETRY_INITIAL_MS: "500",
    },
  });
}, 120_000);
afterAll(async () => {
  saveLogs(sys, "compose");
  await sys?.stop();
  await hook?.close();
  await openai?.close();
}, 60_000);

describe("e2e: the compose stage", () => {
  it("investigation → action → amended report: the final analysis, the summary's input and the notification are the composed report", async () => {
    const session = await ended("Composed", "completed");
    expect(shape(session)).toEqual([
      ["investigate", "investigation", "completed", null],
      ["remediate", "action", "completed", true],
      ["remediate - Amended Report", "compose", "completed", null],
    ]);
    const compose = session.stages[2];
    // Its own model: defaults.compose_provider, not the chain's llm_provider.
    expect(
      compose?.executions.map((e) => [e.agent_name, e.kind, e.status, e.llm_provider]),
    ).toEqual([["ComposeAgent", "compose", "completed", "scripted-editor"]]);
    expect(session.final_analysis).toBe(COMPOSED);
    // The action stage keeps its memo, without the YES line.
    const memo = (await timelineOf(session.id, session.stages[1]?.id)).find(
      (e) => e.event_type === "final_analysis",
    );
    expect(memo?.content).toBe("Restarted payments-api-7f9c6d5b8-x2kqz.");
    // The compose stage's own timeline and trace: its answer, and the two documents it was given.
    const own = await timelineOf(session.id, compose?.id);
    expect(own.map((e) => [e.event_type, e.status, e.content])).toEqual([
      ["final_analysis", "completed", COMPOSED],
    ]);
    const call = await prompt(session.id, { stageId: compose?.id });
    expect(call.type).toBe("composition");
    expect(call.system).toContain("Keep automated actions apart from human follow-ups");
    expect(call.user).toContain(
      `=== UPSTREAM REPORT ===\n${INVESTIGATION}\n=== END UPSTREAM REPORT ===\n\n=== ACTION MEMO ===\nRestarted payments-api-7f9c6d5b8-x2kqz.\n=== END ACTION MEMO ===`,
    );
    expect(call.user).not.toMatch(/^YES$/m);
    expect(call.response).toBe(COMPOSED);
    // The executive summary summarized the composed report.
    const summary = await prompt(session.id, { type: "executive_summary" });
    expect(summary.text.join("\n")).toContain("- ~~Restart payments-api.~~ Done.");
    expect(session.executive_summary).toBe("payments-api was OOM-killed and restarted.");
    // The completed notification carries it.
    const sent = await until(
      async () =>
        hook.requests
          .map((r) => NotificationWebhookPayloadSchema.parse(JSON.parse(r.body)))
          .find((p) => p.session_id === session.id && p.event === "completed"),
      { what: `the completed webhook of ${session.id}`, timeoutMs: 15_000 },
    );
    expect(sent.final_analysis).toBe(COMPOSED);
    expect(sent.executive_summary).toBe("payments-api was OOM-killed and restarted.");
  }, 30_000);

  it("the action agent declined: still composed, the amendment says no action was taken", async () => {
    const session = await ended("ComposeDeclines", "completed");
    expect(shape(session)).toEqual([
      ["investigate", "investigation", "completed", null],
      ["remediate", "action", "completed", false],
      ["remediate - Amended Report", "compose", "completed", null],
    ]);
    expect(session.final_analysis).toContain(
      "## Actions\nNone taken: a restart would not fix a memory limit that is too low.",
    );
  }, 30_000);

  it("its compose model refuses: the compose call falls back to the chain's fallback provider", async () => {
    const before = openai.requests.length;
    const session = await ended("ComposeFallback", "completed");
    const compose = session.stages[2];
    expect([compose?.stage_name, compose?.kind, compose?.status]).toEqual([
      "remediate - Amended Report",
      "compose",
      "completed",
    ]);
    expect(
      compose?.executions.map((e) => [e.agent_name, e.llm_provider, e.original_llm_provider]),
    ).toEqual([["ComposeAgent", "scripted", "openai-down"]]);
    // The refused call went to the loopback OpenAI with the two documents.
    const asked = openai.requests.slice(before).map((r) => JSON.stringify(r.body));
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.every((body) => body.includes("=== ACTION MEMO ==="))).toBe(true);
    const own = await timelineOf(session.id, compose?.id);
    const fallback = own.find((e) => e.event_type === "provider_fallback");
    expect(fallback?.metadata).toMatchObject({
      original_provider: "openai-down",
      fallback_provider: "scripted",
      trigger: "immediate",
    });
    expect(session.final_analysis).toBe(COMPOSED);
  }, 30_000);

  it("the compose call fails outright: the stage fails, the report is the concatenation, a warning is shown, the session completes", async () => {
    const session = await ended("ComposeFails", "completed");
    expect(shape(session)).toEqual([
      ["investigate", "investigation", "completed", null],
      ["remediate", "action", "completed", true],
      ["remediate - Amended Report", "compose", "failed", null],
    ]);
    const concatenated = `${INVESTIGATION}\n\n## Action result\n\nRestarted payments-api (UNCOMPOSABLE).`;
    expect(session.final_analysis).toBe(concatenated);
    expect(session.executive_summary).toBe("payments-api was OOM-killed and restarted.");
    const summary = await prompt(session.id, { type: "executive_summary" });
    expect(summary.text.join("\n")).toContain("## Action result\n\nRestarted payments-api");
    const warning = (await timelineOf(session.id, session.stages[2]?.id)).find(
      (e) =>
        e.event_type === "error" &&
        (e.metadata as { kind?: string } | null)?.kind === "compose_fallback",
    );
    expect(warning?.metadata).toMatchObject({ severity: "warning" });
    expect(warning?.content).toContain("scripted compose outage");
    expect(warning?.content).toContain("upstream report followed by the action result");
  }, 30_000);

  it("an action-only chain has no upstream report: no compose stage, the memo is the final analysis", async () => {
    const session = await ended("ActionOnly", "completed");
    expect(shape(session)).toEqual([["remediate", "action", "completed", true]]);
    expect(session.final_analysis).toBe("Restarted payments-api-7f9c6d5b8-x2kqz.");
  }, 30_000);

  it("a failed action stage: the session fails and nothing is composed", async () => {
    const session = await ended("ActionFails", "failed");
    expect(shape(session)).toEqual([
      ["investigate", "investigation", "completed", null],
      ["remediate", "action", "failed", null],
    ]);
    expect(session.final_analysis).toBe(INVESTIGATION);
  }, 30_000);
});
