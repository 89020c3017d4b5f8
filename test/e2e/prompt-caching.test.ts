/**
 * Prompt caching (ADR-0026) and reasoning effort through every service: the investigation
 * loop's requests reach a loopback Anthropic fake with `cache_control` on the last tool and
 * `output_config.effort`; the fake reports cache usage as the API does (the tool prefix written
 * on the first call, read on the second). The cache tokens are stored on each interaction,
 * priced at the bundled table's cache rates, and shown by the trace and usage APIs.
 */

import { resolve } from "node:path";
import {
  type LLMInteractionDetail,
  type SessionDetail,
  TERMINAL_SESSION_STATUSES,
  type TraceListResponse,
  type UsageSummaryResponse,
} from "@tarsy/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeProvider, startFakeProvider } from "../../llm-service/test/fakes/http.ts";
import { type ClaudeBody as Body, cachingClaude, PREFIX } from "./claude-cache-fake.ts";
import { saveLogs, submitAlert, waitStatus } from "./scenario-support.ts";
import { bootSystem, type E2E, ROOT } from "./support.ts";

const CONFIG = resolve(ROOT, "test/e2e/testdata/prompt-caching");

// claude-sonnet-4-5 in the bundled table: input 3, 1-hour cache write 6, cache read 0.30,
// output 15 USD per million tokens.
const FIRST = 0.02535; // 200 × 3 + 4000 × 6 (written) + 50 × 15
const SECOND = 0.00267; // 250 × 3 + 4000 × 0.30 (read; 12,000 µUSD uncached) + 48 × 15
const SUMMARY = 0.0006; // 100 × 3 + 20 × 15

describe("e2e: prompt caching and reasoning effort", () => {
  let sys: E2E;
  let fake: FakeProvider;
  let sessionId: string;
  const api = async <T>(path: string): Promise<T> => {
    const r = await sys.api<T>(path);
    expect(r.status, path).toBe(200);
    return r.body;
  };

  beforeAll(async () => {
    fake = await startFakeProvider(cachingClaude);
    sys = await bootSystem({
      configDir: CONFIG,
      env: { FAKE_ANTHROPIC_URL: fake.url, E2E_CLAUDE_KEY: "sk-ant-e2e-0123456789abcdef" },
    });
    sessionId = await submitAlert(sys, "Cached", { pod: "payments-api-7f9c6d5b8-x2kqz" });
    const done = await waitStatus(sys, sessionId, TERMINAL_SESSION_STATUSES, 60_000);
    expect(done.status, done.error_message ?? "").toBe("completed");
  }, 120_000);

  afterAll(async () => {
    saveLogs(sys, "prompt-caching");
    await sys?.stop();
    await fake?.close();
  }, 60_000);

  it("the loop's requests carry cache_control on the last tool only; every request the effort", async () => {
    const bodies = fake.requests.map((r) => r.body as Body);
    const loop = bodies.filter((b) => b.tools?.length);
    const oneShot = bodies.filter((b) => !b.tools?.length);
    expect(loop).toHaveLength(2);
    expect(oneShot).toHaveLength(1);
    for (const body of loop) {
      expect(body.tools?.at(-1)?.cache_control).toEqual({ type: "ephemeral", ttl: "1h" });
      expect(JSON.stringify(body).match(/cache_control/g)).toHaveLength(1);
    }
    // The executive summary is a one-shot: a cache write would never be read.
    expect(JSON.stringify(oneShot[0])).not.toContain("cache_control");
    for (const body of bodies) expect(body.output_config).toEqual({ effort: "high" });
  }, 30_000);

  it("the trace shows each call's cache reads and writes, its effort and its cost at cache rates", async () => {
    const trace = await api<TraceListResponse>(`/api/v1/sessions/${sessionId}/trace`);
    const [exec] = trace.stages[0]?.executions ?? [];
    const row = (i: TraceListResponse["session_interactions"][number]) => ({
      type: i.interaction_type,
      input: i.input_tokens,
      read: i.cache_read_tokens,
      write: i.cache_creation_tokens,
      effort: i.reasoning_effort,
      usd: i.estimated_cost_usd,
    });
    expect(exec?.llm_interactions.map(row)).toEqual([
      { type: "iteration", input: 200, read: 0, write: PREFIX, effort: "high", usd: FIRST },
      { type: "final_analysis", input: 250, read: PREFIX, write: 0, effort: "high", usd: SECOND },
    ]);
    expect(trace.session_interactions.map(row)).toEqual([
      { type: "executive_summary", input: 100, read: 0, write: 0, effort: "high", usd: SUMMARY },
    ]);
    const second = exec?.llm_interactions[1];
    const detail = await api<LLMInteractionDetail>(
      `/api/v1/sessions/${sessionId}/trace/llm/${second?.id}`,
    );
    expect(detail).toMatchObject({ cache_read_tokens: PREFIX, reasoning_effort: "high" });
  }, 30_000);

  it("the execution records its reasoning effort (no fallback: no original)", async () => {
    const session = await api<SessionDetail>(`/api/v1/sessions/${sessionId}`);
    expect(session.stages[0]?.executions[0]).toMatchObject({
      llm_provider: "claude-cached",
      reasoning_effort: "high",
      original_reasoning_effort: null,
    });
  }, 30_000);

  it("the usage API sums uncached input, cache reads and writes, and the cost", async () => {
    const usage = await api<UsageSummaryResponse>("/api/v1/usage/summary");
    const expected = {
      llm_interactions: 3,
      input_tokens: 550,
      cache_read_tokens: PREFIX,
      cache_creation_tokens: PREFIX,
      estimated_cost_usd: Math.round((FIRST + SECOND + SUMMARY) * 1e10) / 1e10,
      cost_completeness: "complete",
    };
    expect(usage.totals).toMatchObject(expected);
    expect(usage.by_model).toEqual([
      expect.objectContaining({ model: "claude-sonnet-4-5", ...expected }),
    ]);
  }, 30_000);
});
