import { createLogger } from "@tarsy/runtime";
import { describe, expect, it } from "vitest";
import { AuthError, CancelledError, RateLimitedError } from "./errors.ts";
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

  it("backs off exponentially within bounds", () => {
    const p = { maxRetries: 3, baseDelayMs: 100, maxDelayMs: 300 };
    for (let i = 0; i < 20; i++) {
      expect(backoffDelay(p, 0)).toBeGreaterThanOrEqual(50);
      expect(backoffDelay(p, 0)).toBeLessThanOrEqual(100);
      expect(backoffDelay(p, 5)).toBeLessThanOrEqual(300);
    }
  });
});
