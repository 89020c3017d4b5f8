/**
 * Cost: sessions run through every service with a scripted LLM reporting known token counts,
 * priced as each interaction is written (config `model_rates`, an active promotion, a model
 * without a rate) and exposed by the API on the list, the detail (session, stage, execution),
 * the trace and the summary. Rates of testdata/cost/tarsy.yaml: acme-rated-1 2/8 USD per
 * million (input/output), acme-promo-1 2/8 but 1/4 under the active promotion `launch`,
 * acme-mystery-1 none. Thinking tokens are billed at the output rate.
 */

import { resolve } from "node:path";
import type {
  CostTotals,
  SessionDetail,
  SessionListResponse,
  SessionStatistics,
  TraceListResponse,
} from "@tarsy/contracts";
import { until } from "@tarsy/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ask, chatStage, saveLogs, submitAlert, waitStatus } from "./scenario-support.ts";
import { bootSystem, type E2E, ROOT } from "./support.ts";

const COST_DIR = resolve(ROOT, "test/e2e/testdata/cost");

// Per call, from llm-script.yaml: (input × in + (output + thinking) × out) / 1e6.
const RATED_AGENT = 0.0044; // 1000 × 2 + 300 × 8
const PROMO_AGENT = 0.0022; // 1000 × 1 + 300 × 4 (promotion `launch`)
const EXEC_SUMMARY = 0.0014; // 500 × 2 + 50 × 8 (default provider: acme-rated-1)
const CHAT_ANSWER = 0.0048; // 2000 × 2 + 100 × 8

/** A sum of the above to 10 decimals, as the API rounds (plain JS sums carry float noise). */
const sum = (...usd: number[]) => Math.round(usd.reduce((a, b) => a + b, 0) * 1e10) / 1e10;

const complete = (usd: number): CostTotals => ({
  estimated_cost_usd: usd,
  cost_completeness: "complete",
  unpriced_interactions: 0,
});

let sys: E2E | undefined;
const api = async <T>(path: string): Promise<T> => {
  const r = await (sys as E2E).api<T>(path);
  expect(r.status, path).toBe(200);
  return r.body;
};
const session = (id: string) => api<SessionDetail>(`/api/v1/sessions/${id}`);
const trace = (id: string) => api<TraceListResponse>(`/api/v1/sessions/${id}/trace`);
const finished = async (alertType: string): Promise<string> => {
  const id = await submitAlert(sys as E2E, alertType);
  await waitStatus(sys as E2E, id, ["completed"], 60_000);
  return id;
};

beforeAll(async () => {
  sys = await bootSystem({
    configDir: COST_DIR,
    llmScriptPath: resolve(COST_DIR, "llm-script.yaml"),
  });
}, 120_000);
afterAll(async () => {
  saveLogs(sys, "cost");
  await sys?.stop();
});

describe("Cost", () => {
  it("model_rates price every interaction; the exact USD on interaction, execution, stage and session, chat included", async () => {
    const stack = sys as E2E;
    const id = await finished("Rated");
    const detail = await session(id);
    const [stage] = detail.stages;
    expect(stage?.cost).toEqual(complete(RATED_AGENT));
    expect(stage?.token_usage).toEqual({
      input_tokens: 1000,
      output_tokens: 200,
      thinking_tokens: 100,
      total_tokens: 1300,
    });
    expect(stage?.executions[0]?.cost).toEqual(complete(RATED_AGENT));
    expect(detail.cost).toEqual(complete(sum(RATED_AGENT, EXEC_SUMMARY)));

    const traced = await trace(id);
    const agentCalls = traced.stages[0]?.executions[0]?.llm_interactions ?? [];
    expect(agentCalls.map((i) => [i.model_name, i.cost_status, i.estimated_cost_usd])).toEqual([
      ["acme-rated-1", "priced", RATED_AGENT],
    ]);
    expect(
      traced.session_interactions.map((i) => [
        i.interaction_type,
        i.cost_status,
        i.estimated_cost_usd,
      ]),
    ).toEqual([["executive_summary", "priced", EXEC_SUMMARY]]);

    // A chat answer is an LLM interaction of the session too.
    const chat = await ask(stack, id, "What now?");
    await until(
      async () => ((await chatStage(stack, id, chat.id)).status === "completed" ? true : null),
      { what: "the chat answer", timeoutMs: 30_000 },
    );
    const after = await session(id);
    const total = sum(RATED_AGENT, EXEC_SUMMARY, CHAT_ANSWER);
    expect(after.cost).toEqual(complete(total));
    expect(after.stages.find((s) => s.id === chat.id)?.cost).toEqual(complete(CHAT_ANSWER));

    const list = await api<SessionListResponse>("/api/v1/sessions?page_size=50");
    expect(list.sessions.find((s) => s.id === id)?.cost).toEqual(complete(total));
    const summary = await api<SessionStatistics>(`/api/v1/sessions/${id}/summary`);
    expect(summary).toMatchObject({ estimated_cost_usd: total, cost_completeness: "complete" });
  });

  it("an active promotion prices its model instead of model_rates (an ended one does not)", async () => {
    const id = await finished("Promo");
    const detail = await session(id);
    expect(detail.stages[0]?.cost).toEqual(complete(PROMO_AGENT));
    expect(detail.cost).toEqual(complete(sum(PROMO_AGENT, EXEC_SUMMARY)));
    const call = (await trace(id)).stages[0]?.executions[0]?.llm_interactions[0];
    expect(call).toMatchObject({
      model_name: "acme-promo-1",
      cost_status: "priced",
      estimated_cost_usd: PROMO_AGENT,
    });
  });

  it("a model without a rate is unpriced: partial when the session has priced calls too, none when not", async () => {
    const mixed = await finished("Mixed");
    const detail = await session(mixed);
    expect(detail.stages[0]?.cost).toEqual({
      estimated_cost_usd: 0,
      cost_completeness: "none",
      unpriced_interactions: 1,
    });
    expect(detail.cost).toEqual({
      estimated_cost_usd: EXEC_SUMMARY,
      cost_completeness: "partial",
      unpriced_interactions: 1,
    });
    const call = (await trace(mixed)).stages[0]?.executions[0]?.llm_interactions[0];
    expect(call).toMatchObject({
      model_name: "acme-mystery-1",
      cost_status: "unpriced",
      estimated_cost_usd: null,
    });

    const unpriced = await finished("Unpriced");
    expect((await session(unpriced)).cost).toEqual({
      estimated_cost_usd: 0,
      cost_completeness: "none",
      unpriced_interactions: 2,
    });
  });
});
