import { createLogger } from "@tarsy/runtime";
import { describe, expect, it } from "vitest";
import {
  AuthError,
  CancelledError,
  classifyError,
  QuotaExhaustedError,
  RateLimitedError,
  retryHintMs,
} from "./errors.ts";
import type { Chunk } from "./request.ts";
import { backoffDelay, withRetry } from "./retry.ts";

const logger = createLogger({ service: "test", level: "silent" });
const policy = { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 4 };
const classify = { provider: "p", apiKeyEnv: "K", secrets: [] };

async function drain(it: AsyncIterable<Chunk>): Promise<Chunk[]> {
  const out: Chunk[] = [];
  for await (const c of it) out.push(c);
  return out;
}

describe("withRetry", () => {
  it("retries transient errors before output, then succeeds", async () => {
    let attempts = 0;
    const chunks = await drain(
      withRetry(
        async function* () {
          attempts++;
          if (attempts < 3) throw new RateLimitedError("429");
          yield { text: { content: "ok" } };
        },
        { policy, classify, signal: new AbortController().signal, logger },
      ),
    );
    expect(attempts).toBe(3);
    expect(chunks).toEqual([{ text: { content: "ok" } }]);
  });

  it("gives up after maxRetries with the retryable error, saying how many attempts", async () => {
    let attempts = 0;
    const run = drain(
      withRetry(
        async function* () {
          attempts++;
          yield* [];
          throw new RateLimitedError("429");
        },
        { policy, classify, signal: new AbortController().signal, logger },
      ),
    );
    await expect(run).rejects.toThrow(/gave up after 4 attempts/);
    expect(attempts).toBe(4);
  });

  it("does not retry permanent errors or errors after output", async () => {
    let attempts = 0;
    await expect(
      drain(
        withRetry(
          async function* () {
            attempts++;
            yield* [];
            throw new AuthError("401");
          },
          { policy, classify, signal: new AbortController().signal, logger },
        ),
      ),
    ).rejects.toBeInstanceOf(AuthError);
    expect(attempts).toBe(1);
  });

  it("stops a backoff sleep at once when the caller cancels", async () => {
    const abort = new AbortController();
    const slow = { maxRetries: 3, baseDelayMs: 60_000, maxDelayMs: 60_000 };
    const run = drain(
      withRetry(
        async function* () {
          yield* [];
          throw new RateLimitedError("429");
        },
        { policy: slow, classify, signal: abort.signal, logger },
      ),
    );
    setTimeout(() => abort.abort(), 20);
    const started = Date.now();
    await expect(run).rejects.toBeInstanceOf(CancelledError);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it("backs off with full jitter: uniform in [0, min(max, base·2^retry)]", () => {
    const p = { maxRetries: 3, baseDelayMs: 100, maxDelayMs: 300 };
    expect(backoffDelay(p, 0, undefined, () => 0)).toBe(0);
    expect(backoffDelay(p, 0, undefined, () => 0.999)).toBe(100);
    expect(backoffDelay(p, 1, undefined, () => 0.5)).toBe(100);
    expect(backoffDelay(p, 5, undefined, () => 0.999)).toBe(300);
  });

  it("takes a provider's retry hint as given up to 60 s; a longer or no hint gets the jitter", () => {
    const p = { maxRetries: 3, baseDelayMs: 100, maxDelayMs: 300 };
    expect(backoffDelay(p, 0, 2_500, () => 0.5)).toBe(2_500);
    expect(backoffDelay(p, 0, 60_000, () => 0.5)).toBe(60_000);
    expect(backoffDelay(p, 0, 61_000, () => 0.5)).toBe(50);
  });
});

describe("classifying a 429", () => {
  const ctx = { ...classify, signal: new AbortController().signal };
  const apiError = (headers: Record<string, string>, body: string) =>
    Object.assign(new Error("Too Many Requests"), {
      statusCode: 429,
      responseHeaders: headers,
      responseBody: body,
    });

  it("a throttle carries the wait it asked for (Retry-After seconds, HTTP-date, retry-after-ms)", () => {
    const now = Date.now();
    expect(retryHintMs(apiError({ "retry-after": "7" }, "{}"), now)).toBe(7_000);
    expect(
      retryHintMs(apiError({ "retry-after": new Date(now + 5_000).toUTCString() }, "{}"), now),
    ).toBeGreaterThan(3_900);
    expect(
      retryHintMs(apiError({ "retry-after": new Date(now - 5_000).toUTCString() }, "{}"), now),
    ).toBeUndefined();
    expect(retryHintMs(apiError({ "retry-after-ms": "1500" }, "{}"), now)).toBe(1_500);
    const limited = classifyError(apiError({ "Retry-After": "3" }, "{}"), ctx);
    expect(limited).toBeInstanceOf(RateLimitedError);
    expect(limited.retryAfterMs).toBe(3_000);
  });

  it("Google's RetryInfo.retryDelay in the error details is a hint too", () => {
    const body = JSON.stringify({
      error: {
        code: 429,
        status: "RESOURCE_EXHAUSTED",
        details: [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "53s" }],
      },
    });
    expect(classifyError(apiError({}, body), ctx).retryAfterMs).toBe(53_000);
  });

  it("a spent quota, x-should-retry: false or a wait past 60 s is not retried", () => {
    for (const err of [
      apiError(
        {},
        '{"error":{"type":"insufficient_quota","message":"You exceeded your current quota"}}',
      ),
      apiError({ "x-should-retry": "false" }, "{}"),
      apiError({ "retry-after": "3600" }, "{}"),
    ]) {
      const classified = classifyError(err, ctx);
      expect(classified).toBeInstanceOf(QuotaExhaustedError);
      expect(classified.retryable).toBe(false);
    }
  });
});
