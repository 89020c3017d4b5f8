import { createServer } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import {
  createLlmClient,
  LlmCancelledError,
  LlmDeadlineExceededError,
  LlmInvalidArgumentError,
  LlmUnavailableError,
} from "@tarsy/llm-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scriptedEmbedding } from "../src/index.ts";
import { type FakeProvider, type Responder, startFakeProvider } from "./fakes/http.ts";
import { type Harness, startHarness } from "./harness.ts";

let h: Harness;
let openai: FakeProvider;
beforeAll(async () => {
  openai = await startFakeProvider();
  h = await startHarness({ MY_OPENAI_KEY: "sk-test-client-embed-000" });
});
afterAll(async () => {
  await h.stop();
  await openai.close();
});

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
  const { port } = srv.address() as { port: number };
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

/** A provider that never answers: it holds the request until the client hangs up. */
const hang: Responder = async (res) => {
  while (!res.destroyed) await sleep(20);
};

const slowOpenAi = () => ({
  provider: "openai",
  model: "text-embedding-3-small",
  apiKeyEnv: "MY_OPENAI_KEY",
  baseUrl: `${openai.url}/v1`,
});

describe("llm-client embed over real gRPC", () => {
  it("returns one number[] per text, in order, with the token count", async () => {
    const texts = ["crashloop in payments-api", "etcd leader election lost"];
    const out = await h.client.embed({
      config: { provider: "scripted", dimensions: 16 },
      texts,
      task: "document",
      sessionId: "sess-client",
    });
    expect(out.embeddings).toEqual(texts.map((t) => scriptedEmbedding(t, 16)));
    expect(out.inputTokens).toBeGreaterThan(0);
  });

  it("rejects malformed input before calling, as LlmInvalidArgumentError", async () => {
    // Nothing listens there: only a check made before calling can answer INVALID_ARGUMENT.
    const client = createLlmClient({ address: `127.0.0.1:${await freePort()}` });
    try {
      for (const input of [
        { config: { provider: "scripted" }, texts: [], task: "document" as const },
        {
          config: { provider: "scripted", dimensions: 5000 },
          texts: ["x"],
          task: "query" as const,
        },
        { config: { provider: "scripted" }, texts: ["x"], task: "search" as "query" },
      ]) {
        await expect(client.embed(input)).rejects.toBeInstanceOf(LlmInvalidArgumentError);
      }
    } finally {
      client.close();
    }
  });

  it("maps a refused connection to LlmUnavailableError", async () => {
    const client = createLlmClient({ address: `127.0.0.1:${await freePort()}` });
    try {
      await expect(
        client.embed({ config: { provider: "scripted" }, texts: ["x"], task: "query" }),
      ).rejects.toBeInstanceOf(LlmUnavailableError);
    } finally {
      client.close();
    }
  });

  it("cancels the call when the signal aborts, and llm-service aborts the provider request", async () => {
    openai.enqueue(hang);
    const abort = new AbortController();
    const pending = h.client.embed(
      { config: slowOpenAi(), texts: ["slow"], task: "query" },
      { signal: abort.signal },
    );
    await expect.poll(() => openai.requests.length, { timeout: 2000 }).toBe(1);
    abort.abort();
    await expect(pending).rejects.toBeInstanceOf(LlmCancelledError);
    await openai.clientClosed();
  });

  it("fails with LlmDeadlineExceededError once deadlineMs passes", async () => {
    openai.enqueue(hang);
    const started = Date.now();
    await expect(
      h.client.embed({ config: slowOpenAi(), texts: ["slow"], task: "query" }, { deadlineMs: 300 }),
    ).rejects.toBeInstanceOf(LlmDeadlineExceededError);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("rejects at once, without calling, when the signal has already fired", async () => {
    const requests = openai.requests.length;
    await expect(
      h.client.embed(
        { config: slowOpenAi(), texts: ["x"], task: "query" },
        { signal: AbortSignal.abort() },
      ),
    ).rejects.toBeInstanceOf(LlmCancelledError);
    expect(openai.requests.length).toBe(requests);
  });
});
