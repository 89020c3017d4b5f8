/**
 * Named fallback lists through every service (ADR-0030): one session whose primary provider
 * refuses every call. The investigation falls back along `premium`; the executive summary and
 * the scoring judge fall back along `mid` (their job selectors), never touching `premium`.
 * The providers are loopback fakes speaking OpenAI's wire protocol.
 */
import { resolve } from "node:path";
import {
  type SessionScore,
  TERMINAL_SESSION_STATUSES,
  type TimelineResponse,
} from "@tarsy/contracts";
import { until } from "@tarsy/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type FakeProvider,
  type RecordedRequest,
  type Responder,
  respondJson,
  respondSse,
  startFakeProvider,
} from "../../llm-service/test/fakes/http.ts";
import { openAiError, openAiStream } from "../../llm-service/test/fakes/openai.ts";
import { saveLogs, submitAlert, waitStatus } from "./scenario-support.ts";
import { bootSystem, type E2E, ROOT } from "./support.ts";

const CONFIG = resolve(ROOT, "test/e2e/testdata/fallback-lists");

type OpenAiBody = { messages: { role: string; content: unknown }[] };
const systemOf = (req: RecordedRequest) =>
  JSON.stringify((req.body as OpenAiBody).messages.find((m) => m.role === "system")?.content);
const isSummary = (req: RecordedRequest) => systemOf(req).includes("writing an executive summary");
const isJudge = (req: RecordedRequest) => systemOf(req).includes("evaluating the quality");

const say = (text: string): Responder =>
  respondSse(openAiStream({ text: [text], usage: { prompt: 5, completion: 3 } }));

/** `premium`: answers investigations only. */
const premium: Responder = (res, req) =>
  isSummary(req) || isJudge(req)
    ? respondJson(400, openAiError("invalid_request_error", "not for premium"))(res, req)
    : say("PREMIUM-ANALYSIS: the pod is OOM-killed.")(res, req);

/** `mid`: answers the executive summary and the judge (evaluation, then its tool report). */
const mid: Responder = (res, req) => {
  if (isSummary(req)) return say("MID-SUMMARY: the pod is OOM-killed.")(res, req);
  if (!isJudge(req)) {
    return respondJson(400, openAiError("invalid_request_error", "not for mid"))(res, req);
  }
  const turns = (req.body as OpenAiBody).messages.filter((m) => m.role === "assistant").length;
  return say(turns === 0 ? "Outcome: correct\nThe evidence supports it.\n77" : "None.")(res, req);
};

describe("e2e: named fallback lists", () => {
  let sys: E2E;
  const fakes = {} as Record<"main" | "premium" | "mid", FakeProvider>;

  beforeAll(async () => {
    fakes.main = await startFakeProvider(
      respondJson(401, openAiError("invalid_api_key", "Incorrect API key provided")),
    );
    fakes.premium = await startFakeProvider(premium);
    fakes.mid = await startFakeProvider(mid);
    sys = await bootSystem({
      configDir: CONFIG,
      env: {
        FAKE_MAIN_URL: fakes.main.url,
        FAKE_PREMIUM_URL: fakes.premium.url,
        FAKE_MID_URL: fakes.mid.url,
        FL_MAIN_KEY: "sk-main-0123456789",
        FL_PREMIUM_KEY: "sk-premium-0123456789",
        FL_MID_KEY: "sk-mid-0123456789",
      },
    });
  }, 180_000);

  afterAll(async () => {
    saveLogs(sys, "fallback-lists");
    await sys?.stop();
    for (const fake of Object.values(fakes)) await fake?.close();
  }, 60_000);

  it("the investigation walks its list; scoring and the executive summary walk theirs", async () => {
    const id = await submitAlert(sys, "Split");
    const done = await waitStatus(sys, id, TERMINAL_SESSION_STATUSES, 90_000);
    expect(done.status, done.error_message ?? "").toBe("completed");
    expect(done.final_analysis).toBe("PREMIUM-ANALYSIS: the pod is OOM-killed.");
    expect(done.executive_summary).toBe("MID-SUMMARY: the pod is OOM-killed.");

    const score = await until(
      async () => {
        const r = await sys.api<SessionScore>(`/api/v1/sessions/${id}/score`);
        return r.status === 200 && r.body.status !== "in_progress" ? r.body : null;
      },
      { what: "the score to end", timeoutMs: 60_000 },
    );
    expect(score).toMatchObject({ status: "completed", total_score: 77 });

    // Every walk started on `main`, and each went down its own list.
    const timeline = (await sys.api<TimelineResponse>(`/api/v1/sessions/${id}/timeline`)).body;
    const switches = timeline.events
      .filter((e) => e.event_type === "provider_fallback")
      .map((e) => e.metadata as { original_provider: string; fallback_provider: string })
      .map((m) => [m.original_provider, m.fallback_provider]);
    expect(switches).toHaveLength(3);
    expect(switches.filter(([, to]) => to === "premium-backup")).toEqual([
      ["main", "premium-backup"],
    ]);
    expect(switches.filter(([, to]) => to === "mid-backup")).toEqual([
      ["main", "mid-backup"],
      ["main", "mid-backup"],
    ]);
    // `premium` never saw the side paths, `mid` never saw the investigation.
    expect(fakes.premium.requests.length).toBeGreaterThan(0);
    expect(fakes.premium.requests.filter((r) => isSummary(r) || isJudge(r))).toEqual([]);
    expect(fakes.mid.requests.filter(isSummary)).toHaveLength(1);
    expect(fakes.mid.requests.filter(isJudge).length).toBeGreaterThanOrEqual(1);
    expect(fakes.mid.requests.filter((r) => !isSummary(r) && !isJudge(r))).toEqual([]);
    // The refused provider saw one call per walk: bad credentials switch at once.
    expect(fakes.main.requests).toHaveLength(3);
  }, 150_000);
});
