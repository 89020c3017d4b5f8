/**
 * One retry layer, honest waits (ADR-0027, ADR-0028): the SDKs never retry on their own,
 * Retry-After and Google's RetryInfo set the wait (up to 60 s), a spent quota is not retried,
 * a 408 or a dropped connection is, and a cancel stops the retrying at once. Every wait is
 * measured between the requests the provider fake received.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { anthropicError } from "./fakes/anthropic.ts";
import { geminiChunk } from "./fakes/gemini.ts";
import {
  dropConnection,
  type FakeProvider,
  respondJson,
  respondSse,
  startFakeProvider,
} from "./fakes/http.ts";
import { openAiError, openAiStream } from "./fakes/openai.ts";
import { baseInput, collect, errorOf, type Harness, startHarness, textOf } from "./harness.ts";

const SECRETS = {
  OPENAI_KEY: "sk-openai-0123456789",
  GEMINI_KEY: "gem-0123456789",
  ANTHROPIC_KEY: "sk-ant-0123456789",
};
let fake: FakeProvider;
/** Backoff without a hint is at most 20 ms here: any longer wait came from the provider. */
let h: Harness;

const openai = () => ({
  provider: "openai",
  model: "gpt-fake",
  apiKeyEnv: "OPENAI_KEY",
  baseUrl: `${fake.url}/v1`,
});
const gemini = () => ({
  provider: "google",
  backend: "google-native" as const,
  model: "gemini-2.5-flash",
  apiKeyEnv: "GEMINI_KEY",
  baseUrl: fake.url,
});
const anthropic = () => ({
  provider: "anthropic",
  model: "claude-fake",
  apiKeyEnv: "ANTHROPIC_KEY",
  baseUrl: `${fake.url}/v1`,
});
const answer = respondSse(
  openAiStream({ text: ["answered"], usage: { prompt: 1, completion: 1 } }),
);
const throttled = (headers: Record<string, string>) =>
  respondJson(429, openAiError("rate_limit_exceeded", "Rate limit reached"), headers);
const gap = (i = 1) => {
  const [a, b] = [fake.requests[i - 1], fake.requests[i]];
  if (!a || !b) throw new Error(`fewer than ${i + 1} requests`);
  return b.receivedAt - a.receivedAt;
};

beforeAll(async () => {
  fake = await startFakeProvider();
  h = await startHarness(SECRETS, { retry: { maxRetries: 2, baseDelayMs: 5, maxDelayMs: 20 } });
});
afterAll(async () => {
  await h.stop();
  await fake.close();
});
beforeEach(() => {
  fake.requests.length = 0;
});

describe("the provider's own wait", () => {
  it("Retry-After in seconds: the retry comes that long after the 429", async () => {
    fake.enqueue(throttled({ "retry-after": "1" }), answer);
    const chunks = await collect(h.client.generate(baseInput(openai())));
    expect(textOf(chunks)).toBe("answered");
    expect(fake.requests).toHaveLength(2);
    expect(gap()).toBeGreaterThanOrEqual(950);
    expect(gap()).toBeLessThan(3_000);
  }, 15_000);

  it("Retry-After as an HTTP-date", async () => {
    // HTTP-dates have whole seconds: two seconds ahead is at least one second's wait.
    const at = new Date(Math.ceil(Date.now() / 1000) * 1000 + 2_000).toUTCString();
    fake.enqueue(throttled({ "retry-after": at }), answer);
    const chunks = await collect(h.client.generate(baseInput(openai())));
    expect(textOf(chunks)).toBe("answered");
    expect(gap()).toBeGreaterThanOrEqual(950);
    expect(gap()).toBeLessThan(3_500);
  }, 15_000);

  it("Google's RetryInfo.retryDelay (google-native backend)", async () => {
    fake.enqueue(
      respondJson(429, {
        error: {
          code: 429,
          status: "RESOURCE_EXHAUSTED",
          message: "Resource has been exhausted",
          details: [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "1s" }],
        },
      }),
      respondSse([geminiChunk([{ text: "after the wait" }], { finishReason: "STOP" })]),
    );
    const chunks = await collect(h.client.generate(baseInput(gemini())));
    expect(textOf(chunks)).toBe("after the wait");
    expect(fake.requests).toHaveLength(2);
    expect(gap()).toBeGreaterThanOrEqual(950);
    expect(gap()).toBeLessThan(3_000);
  }, 15_000);

  it("a 429 that asks for more than 60 s is not waited out: one request, quota_exhausted", async () => {
    fake.enqueue(throttled({ "retry-after": "3600" }));
    const chunks = await collect(h.client.generate(baseInput(openai())));
    expect(errorOf(chunks)).toMatchObject({ code: "quota_exhausted", retryable: false });
    expect(fake.requests).toHaveLength(1);
  });
});

describe("what is retried", () => {
  it("a spent quota (insufficient_quota) is not: the provider sees exactly one request", async () => {
    fake.enqueue(
      respondJson(
        429,
        openAiError(
          "insufficient_quota",
          "You exceeded your current quota, check your plan and billing details.",
        ),
      ),
    );
    const chunks = await collect(h.client.generate(baseInput(openai())));
    expect(errorOf(chunks)).toMatchObject({ code: "quota_exhausted", retryable: false });
    expect(fake.requests).toHaveLength(1);
  });

  it("x-should-retry: false is not", async () => {
    fake.enqueue(throttled({ "x-should-retry": "false" }));
    const chunks = await collect(h.client.generate(baseInput(openai())));
    expect(errorOf(chunks)).toMatchObject({ code: "quota_exhausted" });
    expect(fake.requests).toHaveLength(1);
  });

  it("a 408 is retried, then answers", async () => {
    fake.enqueue(respondJson(408, openAiError("timeout", "Request Timeout")), answer);
    const chunks = await collect(h.client.generate(baseInput(openai())));
    expect(errorOf(chunks)).toBeUndefined();
    expect(textOf(chunks)).toBe("answered");
    expect(fake.requests).toHaveLength(2);
  });

  it("a dropped connection is retried, then answers", async () => {
    fake.enqueue(dropConnection, answer);
    const chunks = await collect(h.client.generate(baseInput(openai())));
    expect(errorOf(chunks)).toBeUndefined();
    expect(textOf(chunks)).toBe("answered");
    expect(fake.requests).toHaveLength(2);
  });
});

describe("one retry layer: the SDKs never retry on their own", () => {
  let once: Harness;
  beforeAll(async () => {
    once = await startHarness(SECRETS, {
      retry: { maxRetries: 0, baseDelayMs: 5, maxDelayMs: 20 },
    });
  });
  afterAll(async () => {
    await once.stop();
  });

  it.each([
    ["OpenAI (AI SDK)", openai, respondJson(503, openAiError("server_error", "overloaded"))],
    [
      "Anthropic (AI SDK)",
      anthropic,
      respondJson(529, anthropicError("overloaded_error", "Overloaded")),
    ],
    [
      "Gemini (@google/genai)",
      gemini,
      respondJson(503, { error: { code: 503, status: "UNAVAILABLE", message: "overloaded" } }),
    ],
  ] as const)(
    "%s: a 5xx with no retries allowed reaches the provider once",
    async (_name, config, failure) => {
      fake.enqueue(failure);
      const chunks = await collect(once.client.generate(baseInput(config())));
      expect(errorOf(chunks)).toMatchObject({ code: "provider_unavailable" });
      expect(fake.requests).toHaveLength(1);
    },
  );
});

describe("cancel", () => {
  afterEach(() => {
    fake.requests.length = 0;
  });

  it("stops the retrying at once: no second request, even with a 30 s Retry-After pending", async () => {
    fake.enqueue(throttled({ "retry-after": "30" }), answer);
    const abort = new AbortController();
    const lines = h.logLines.length;
    const started = Date.now();
    const run = collect(h.client.generate(baseInput(openai()), { signal: abort.signal })).catch(
      (err: unknown) => err,
    );
    await expect.poll(() => fake.requests.length).toBe(1);
    abort.abort();
    await run;
    // The mechanism ran: llm-service saw the cancel and ended the call.
    await expect
      .poll(() =>
        h.logLines.slice(lines).some((l) => l.includes("generate cancelled by the caller")),
      )
      .toBe(true);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(fake.requests).toHaveLength(1);
  }, 15_000);
});
