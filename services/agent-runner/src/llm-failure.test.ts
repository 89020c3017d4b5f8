import {
  LlmCancelledError,
  LlmInvalidArgumentError,
  LlmInvalidResponseError,
  LlmRpcError,
  LlmStreamIncompleteError,
  LlmUnavailableError,
} from "@tarsy/llm-client";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  ExecutionAbortedError,
  IterationTimeoutError,
  LlmFirstChunkTimeoutError,
  LlmProviderError,
  LlmStreamStalledError,
} from "./errors.ts";
import { llmFailureKind } from "./llm-failure.ts";
import { backoffDelay } from "./llm-retry.ts";

describe("llmFailureKind", () => {
  it.each([
    [new LlmUnavailableError("llm-service unavailable: x"), "transport"],
    [new LlmStreamIncompleteError("ended without a final chunk"), "transport"],
    [new LlmCancelledError("llm call cancelled: server shutting down"), "transport"],
    [new LlmFirstChunkTimeoutError(100), "transport"],
    [new LlmStreamStalledError(100), "transport"],
    [new LlmProviderError("quota exceeded", "rate_limited"), "provider"],
    [new LlmInvalidArgumentError("bad messages"), "rejected"],
    [new LlmInvalidResponseError("bad chunk"), "rejected"],
    [new LlmRpcError("llm-service call failed: boom"), "rejected"],
    [new Error("anything else"), "rejected"],
    [new ExecutionAbortedError("cancelled"), "aborted"],
    [new IterationTimeoutError(1000), "aborted"],
  ])("%s → %s", (err, kind) => {
    expect(llmFailureKind(err)).toBe(kind);
  });
});

describe("backoffDelay", () => {
  const policy = { baseDelayMs: 250, maxDelayMs: 5_000 };

  it("doubles per retry up to the cap, jittered within the upper half", () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => backoffDelay(n, policy, () => 1))).toEqual([
      250, 500, 1000, 2000, 4000, 5000, 5000,
    ]);
    expect(backoffDelay(3, policy, () => 0)).toBe(500);
  });

  it("stays within [ceiling/2, ceiling] for any retry and random draw", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        fc.integer({ min: 1, max: 2_000 }),
        fc.integer({ min: 1, max: 60_000 }),
        (retry, r, base, max) => {
          const ceiling = Math.min(max, base * 2 ** (retry - 1));
          const delay = backoffDelay(retry, { baseDelayMs: base, maxDelayMs: max }, () => r);
          expect(delay).toBeGreaterThanOrEqual(Math.floor(ceiling / 2));
          expect(delay).toBeLessThanOrEqual(Math.ceil(ceiling));
        },
      ),
      { numRuns: 500, interruptAfterTimeLimit: 5_000 },
    );
  });
});
