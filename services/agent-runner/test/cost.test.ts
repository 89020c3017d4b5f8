/**
 * Each LLM interaction the runner writes carries its cost estimate, made once at write time:
 * the price per the config (`model_rates`, promotions) or the bundled table, `unpriced` for a
 * model nobody prices, `disabled` when estimation is off.
 */
import { type CostEstimationSettings, createCostEstimator } from "@tarsy/cost";
import { listLLMInteractions } from "@tarsy/db";
import { describe, expect } from "vitest";
import { runExecution } from "../src/execution.ts";
import { createPostgresStore } from "../src/store.ts";
import { runnerDeps, seedExecution, runnerTest as test } from "./support.ts";

// The scripted provider of support.ts reports model "scripted-model".
const SCRIPT = [
  {
    thinking: "Check memory.",
    text: "Looking.",
    tool_calls: [{ id: "call-1", name: "everything.echo", arguments: { message: "hi" } }],
    usage: { input_tokens: 1000, output_tokens: 200, thinking_tokens: 100 },
  },
  {
    text: "Root cause: OOM.",
    usage: { input_tokens: 3000, output_tokens: 400, thinking_tokens: 0 },
  },
];

function settings(over: Partial<CostEstimationSettings>): CostEstimationSettings {
  return { enabled: true, model_rates: {}, promotions: [], ...over };
}

describe("cost at write time", () => {
  test("priced by model_rates: exact USD per interaction, thinking at the output rate; a promotion beats it", async ({
    env,
    llm,
    echo,
  }) => {
    const { client } = await llm([...SCRIPT, ...SCRIPT]);
    const rates = { "scripted-model": { input_per_million: 2, output_per_million: 8 } };

    const first = await seedExecution(env);
    const store = createPostgresStore(
      env.db,
      createCostEstimator(settings({ model_rates: rates })),
    );
    await runExecution(
      runnerDeps(env, client, echo, { store }),
      first,
      new AbortController().signal,
    );
    const priced = await listLLMInteractions(env.db.prisma, { sessionId: first.session_id });
    // (1000 × 2 + 300 × 8) / 1e6 and (3000 × 2 + 400 × 8) / 1e6
    expect(priced.map((i) => [i.costStatus, i.estimatedCostUsd, i.costRateSource])).toEqual([
      ["priced", 0.0044, "model_rates"],
      ["priced", 0.0092, "model_rates"],
    ]);

    const second = await seedExecution(env);
    const promo = createPostgresStore(
      env.db,
      createCostEstimator(
        settings({
          model_rates: rates,
          promotions: [
            {
              id: "half-price",
              model: "scripted-model",
              start_ms: Date.now() - 60_000,
              end_ms: Date.now() + 3_600_000,
              input_per_million: 1,
              output_per_million: 4,
            },
          ],
        }),
      ),
    );
    await runExecution(
      runnerDeps(env, client, echo, { store: promo }),
      second,
      new AbortController().signal,
    );
    const promoted = await listLLMInteractions(env.db.prisma, { sessionId: second.session_id });
    expect(promoted.map((i) => [i.costStatus, i.estimatedCostUsd, i.costRateSource])).toEqual([
      ["priced", 0.0022, "promotion:half-price"],
      ["priced", 0.0046, "promotion:half-price"],
    ]);
  });

  test("a model without a rate is unpriced; estimation disabled stores disabled; neither has a cost", async ({
    env,
    llm,
    echo,
  }) => {
    const { client } = await llm([...SCRIPT, ...SCRIPT]);
    const unknown = await seedExecution(env);
    const store = createPostgresStore(env.db, createCostEstimator(settings({})));
    await runExecution(
      runnerDeps(env, client, echo, { store }),
      unknown,
      new AbortController().signal,
    );
    const unpriced = await listLLMInteractions(env.db.prisma, { sessionId: unknown.session_id });
    expect(unpriced.map((i) => [i.costStatus, i.estimatedCostUsd, i.costRateSource])).toEqual([
      ["unpriced", null, null],
      ["unpriced", null, null],
    ]);

    const off = await seedExecution(env);
    const disabled = createPostgresStore(
      env.db,
      createCostEstimator(
        settings({
          enabled: false,
          model_rates: { "scripted-model": { input_per_million: 2, output_per_million: 8 } },
        }),
      ),
    );
    await runExecution(
      runnerDeps(env, client, echo, { store: disabled }),
      off,
      new AbortController().signal,
    );
    const rows = await listLLMInteractions(env.db.prisma, { sessionId: off.session_id });
    expect(rows.map((i) => [i.costStatus, i.estimatedCostUsd, i.costRateSource])).toEqual([
      ["disabled", null, null],
      ["disabled", null, null],
    ]);
  });
});
