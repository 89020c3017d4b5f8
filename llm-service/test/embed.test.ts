import * as grpc from "@grpc/grpc-js";
import { type EmbedInput, LlmRpcError, LlmUnavailableError } from "@tarsy/llm-client";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { scriptedEmbedding } from "../src/index.ts";
import { loadProtos } from "../src/proto.ts";
import { geminiEmbedRequests, geminiEmbedResponder, geminiError } from "./fakes/gemini.ts";
import { type FakeProvider, respondJson, startFakeProvider } from "./fakes/http.ts";
import { type OpenAiEmbeddingsRequest, openAiEmbedResponder, openAiError } from "./fakes/openai.ts";
import { type Harness, startHarness } from "./harness.ts";

const GEMINI_KEY = "AIza-test-embed-key-424242";
const OPENAI_KEY = "sk-test-embed-openai-0123456789";
let gemini: FakeProvider;
let openai: FakeProvider;
let h: Harness;

/** A vector the test can trace back: [index + 1, text length, 0, 0, …]. */
const traceable =
  (dims: number) =>
  (text: string, index: number): number[] =>
    Array.from({ length: dims }, (_, k) => (k === 0 ? index + 1 : k === 1 ? text.length : 0));

const google = (over: Partial<EmbedInput["config"]> = {}): EmbedInput["config"] => ({
  provider: "google",
  model: "gemini-embedding-001",
  apiKeyEnv: "MY_GEMINI_KEY",
  baseUrl: `${gemini.url}/v1beta`,
  ...over,
});
const openAi = (over: Partial<EmbedInput["config"]> = {}): EmbedInput["config"] => ({
  provider: "openai",
  model: "text-embedding-3-small",
  apiKeyEnv: "MY_OPENAI_KEY",
  baseUrl: `${openai.url}/v1`,
  ...over,
});

const cosine = (a: number[], b: number[]) => {
  const dot = a.reduce((sum, v, i) => sum + v * (b[i] ?? 0), 0);
  return dot / (Math.hypot(...a) * Math.hypot(...b));
};

/** Calls Embed with a raw gRPC client, past llm-client's own validation. */
async function rawEmbed(
  address: string,
  request: Record<string, unknown>,
): Promise<{ code: number; details: string }> {
  const Service = grpc.makeGenericClientConstructor(loadProtos().llmService, "LLMService");
  const client = new Service(address, grpc.credentials.createInsecure());
  const embed = (client as unknown as Record<string, (...args: unknown[]) => void>).Embed;
  try {
    return await new Promise((resolve) => {
      embed?.call(client, request, (err: grpc.ServiceError | null) =>
        resolve(
          err ? { code: err.code, details: err.details } : { code: grpc.status.OK, details: "" },
        ),
      );
    });
  } finally {
    client.close();
  }
}

beforeAll(async () => {
  gemini = await startFakeProvider();
  openai = await startFakeProvider();
  // The default variables are decoys: only the variable the config names may be read.
  h = await startHarness({
    MY_GEMINI_KEY: GEMINI_KEY,
    MY_OPENAI_KEY: OPENAI_KEY,
    GOOGLE_API_KEY: "decoy-google-key-must-not-be-used",
    OPENAI_API_KEY: "sk-decoy-must-not-be-used",
  });
});
afterAll(async () => {
  await h.stop();
  await gemini.close();
  await openai.close();
});
beforeEach(() => {
  gemini.requests.length = 0;
  openai.requests.length = 0;
});

describe("Embed → Gemini embedding API", () => {
  it("embeds one query through :embedContent with the key header, model, RETRIEVAL_QUERY and outputDimensionality", async () => {
    gemini.enqueue(geminiEmbedResponder(traceable(256)));
    const out = await h.client.embed({
      config: google({ dimensions: 256 }),
      texts: ["why is payments-api OOMKilled?"],
      task: "query",
      sessionId: "sess-embed",
    });
    expect(out.embeddings).toHaveLength(1);
    expect(out.embeddings[0]).toHaveLength(256);
    expect(out.embeddings[0]?.slice(0, 2)).toEqual([1, "why is payments-api OOMKilled?".length]);
    expect(out.inputTokens).toBe(0); // Gemini reports no token count for embeddings
    const [req] = gemini.requests;
    expect(req?.method).toBe("POST");
    expect(req?.path).toBe("/v1beta/models/gemini-embedding-001:embedContent");
    expect(req?.headers["x-goog-api-key"]).toBe(GEMINI_KEY);
    expect(req && geminiEmbedRequests(req)).toEqual([
      {
        model: "models/gemini-embedding-001",
        content: { parts: [{ text: "why is payments-api OOMKilled?" }] },
        taskType: "RETRIEVAL_QUERY",
        outputDimensionality: 256,
      },
    ]);
  });

  it("embeds several documents in one :batchEmbedContents call, vectors in the texts' order", async () => {
    gemini.enqueue(geminiEmbedResponder(traceable(768)));
    const texts = ["first memory", "the second memory", "3rd"];
    const out = await h.client.embed({ config: google(), texts, task: "document" });
    expect(out.embeddings.map((v) => v.slice(0, 2))).toEqual(
      texts.map((text, i) => [i + 1, text.length]),
    );
    expect(out.embeddings.every((v) => v.length === 768)).toBe(true);
    expect(gemini.requests).toHaveLength(1);
    const [req] = gemini.requests;
    expect(req?.path).toBe("/v1beta/models/gemini-embedding-001:batchEmbedContents");
    const sent = req ? geminiEmbedRequests(req) : [];
    expect(sent.map((r) => r.content.parts[0]?.text)).toEqual(texts);
    expect(sent.every((r) => r.taskType === "RETRIEVAL_DOCUMENT")).toBe(true);
    // dimensions 0 = the model's default: no outputDimensionality is sent.
    expect(sent.every((r) => r.outputDimensionality === undefined)).toBe(true);
  });

  it("retries a 429 and answers with the next attempt's vectors", async () => {
    gemini.enqueue(
      respondJson(429, geminiError(429, "RESOURCE_EXHAUSTED", "Quota exceeded for embeddings")),
      geminiEmbedResponder(traceable(8)),
    );
    const out = await h.client.embed({
      config: google({ dimensions: 8 }),
      texts: ["a", "bb"],
      task: "document",
    });
    expect(out.embeddings.map((v) => v.slice(0, 2))).toEqual([
      [1, 1],
      [2, 2],
    ]);
    expect(gemini.requests).toHaveLength(2);
  });

  it("answers UNAVAILABLE once retries are exhausted on a persistent 503", async () => {
    gemini.enqueue(
      ...Array.from({ length: 4 }, () =>
        respondJson(503, geminiError(503, "UNAVAILABLE", "The model is overloaded")),
      ),
    );
    const error = await h.client
      .embed({ config: google(), texts: ["x"], task: "query" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmUnavailableError);
    expect((error as LlmUnavailableError).grpcCode).toBe(grpc.status.UNAVAILABLE);
    expect((error as Error).message).toContain("HTTP 503");
    expect((error as Error).message).toContain("gave up after 4 attempts");
    expect(gemini.requests).toHaveLength(4); // the harness allows 3 retries
  });

  it("rejects vectors of another size than asked with FAILED_PRECONDITION naming both sizes", async () => {
    gemini.enqueue(geminiEmbedResponder(traceable(768)));
    const error = await h.client
      .embed({ config: google({ dimensions: 256 }), texts: ["a", "b"], task: "document" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmRpcError);
    expect((error as LlmRpcError).grpcCode).toBe(grpc.status.FAILED_PRECONDITION);
    expect((error as Error).message).toMatch(/768-dimensional.*256 dimensions were requested/);
    expect(gemini.requests).toHaveLength(1); // not retried
  });

  it("fails with FAILED_PRECONDITION naming the variable when the key variable is unset, calling nobody", async () => {
    const error = await h.client
      .embed({ config: google({ apiKeyEnv: "UNSET_EMBED_KEY" }), texts: ["x"], task: "query" })
      .catch((e: unknown) => e);
    expect((error as LlmRpcError).grpcCode).toBe(grpc.status.FAILED_PRECONDITION);
    expect((error as Error).message).toContain("UNSET_EMBED_KEY");
    expect(gemini.requests).toHaveLength(0);
  });
});

describe("Embed → OpenAI embeddings API", () => {
  it("posts /embeddings with model, dimensions, the input array and the bearer key; reports its token count", async () => {
    openai.enqueue(openAiEmbedResponder(traceable(512), 17));
    const texts = ["disk pressure on node-7", "kubelet evicted pods"];
    const out = await h.client.embed({
      config: openAi({ dimensions: 512 }),
      texts,
      task: "document",
    });
    expect(out).toEqual({
      embeddings: texts.map((text, i) => traceable(512)(text, i)),
      inputTokens: 17,
    });
    const [req] = openai.requests;
    expect(req?.method).toBe("POST");
    expect(req?.path).toBe("/v1/embeddings");
    expect(req?.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    const body = req?.body as OpenAiEmbeddingsRequest;
    expect(body.model).toBe("text-embedding-3-small");
    expect(body.input).toEqual(texts);
    expect(body.dimensions).toBe(512);
    expect(body.encoding_format).toBe("float");
  });

  it("does not retry a 401; FAILED_PRECONDITION names the key variable and never the key", async () => {
    openai.enqueue(
      respondJson(
        401,
        openAiError("invalid_api_key", `Incorrect API key provided: ${OPENAI_KEY}.`),
      ),
    );
    const logsBefore = h.logLines.length;
    const error = await h.client
      .embed({ config: openAi(), texts: ["secret incident text"], task: "query" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmRpcError);
    expect((error as LlmRpcError).grpcCode).toBe(grpc.status.FAILED_PRECONDITION);
    expect((error as Error).message).toContain("MY_OPENAI_KEY");
    expect((error as Error).message).toContain("HTTP 401");
    expect((error as Error).message).not.toContain(OPENAI_KEY);
    expect(openai.requests).toHaveLength(1);
    const logs = h.logLines.slice(logsBefore).join("\n");
    expect(logs).toContain("embed failed");
    expect(logs).not.toContain(OPENAI_KEY);
    expect(logs).not.toContain("secret incident text");
  });

  it("maps a provider 400 to INVALID_ARGUMENT without retrying", async () => {
    openai.enqueue(
      respondJson(
        400,
        openAiError("invalid_request_error", "This model does not support dimensions"),
      ),
    );
    const error = await h.client
      .embed({ config: openAi({ dimensions: 3 }), texts: ["x"], task: "query" })
      .catch((e: unknown) => e);
    expect((error as LlmRpcError).grpcCode).toBe(grpc.status.INVALID_ARGUMENT);
    expect((error as Error).message).toContain("does not support dimensions");
    expect(openai.requests).toHaveLength(1);
  });

  it("logs provider, model, count, dimensions and latency, never the texts", async () => {
    openai.enqueue(openAiEmbedResponder(traceable(4)));
    const logsBefore = h.logLines.length;
    await h.client.embed({
      config: openAi({ dimensions: 4 }),
      texts: ["private alert payload", "another"],
      task: "document",
      sessionId: "sess-log",
    });
    const lines = h.logLines.slice(logsBefore).map((l) => JSON.parse(l) as Record<string, unknown>);
    const finished = lines.find((l) => l.msg === "embed finished");
    expect(finished).toMatchObject({
      provider: "openai",
      model: "text-embedding-3-small",
      count: 2,
      dimensions: 4,
      task: "document",
      session_id: "sess-log",
    });
    expect(typeof finished?.ms).toBe("number");
    expect(JSON.stringify(lines)).not.toContain("private alert payload");
  });
});

describe("Embed → scripted embedder", () => {
  const memories = [
    "payments-api pods OOMKilled in namespace prod after a memory limit change",
    "OOMKilled payments-api pods in prod: raise the memory limit",
    "TLS certificate expired on the ingress controller",
  ];

  it("is deterministic and exact in size, and texts sharing words are closer than unrelated ones", async () => {
    const config = { provider: "scripted", dimensions: 64 };
    const first = await h.client.embed({ config, texts: memories, task: "document" });
    const again = await h.client.embed({ config, texts: [memories[0] ?? ""], task: "query" });
    expect(first.embeddings.every((v) => v.length === 64)).toBe(true);
    expect(again.embeddings[0]).toEqual(first.embeddings[0]);
    const [oom1 = [], oom2 = [], tls = []] = first.embeddings;
    expect(cosine(oom1, oom2)).toBeGreaterThan(cosine(oom1, tls) + 0.3);
    expect(Math.hypot(...oom1)).toBeCloseTo(1, 5);
    // The exported embedder gives the very vectors the RPC returns.
    expect(oom1).toEqual(scriptedEmbedding(memories[0] ?? "", 64));
  });

  it("matches a service name whole and by its parts, and uses 768 dimensions by default", async () => {
    const out = await h.client.embed({
      config: { provider: "scripted" },
      texts: [
        "payments-api",
        "payments api",
        "payments-api latency after deploy",
        "checkout errors",
      ],
      task: "query",
    });
    expect(out.embeddings.every((v) => v.length === 768)).toBe(true);
    const [hyphenated = [], spaced = [], doc = [], other = []] = out.embeddings;
    // The parts alone match the document; the whole name, which it also contains, matches better.
    expect(cosine(spaced, doc)).toBeGreaterThan(0.4);
    expect(cosine(hyphenated, doc)).toBeGreaterThan(cosine(spaced, doc) + 0.1);
    expect(cosine(hyphenated, other)).toBeLessThan(0.2);
  });

  it("answers every provider when the server runs with scriptAllProviders, calling no provider", async () => {
    const scripted = await startHarness({}, { scriptAllProviders: true });
    try {
      const out = await scripted.client.embed({
        config: google({ dimensions: 32, apiKeyEnv: "NOT_SET_ANYWHERE" }),
        texts: ["node disk pressure"],
        task: "document",
      });
      expect(out.embeddings).toEqual([scriptedEmbedding("node disk pressure", 32)]);
      expect(gemini.requests).toHaveLength(0);
    } finally {
      await scripted.stop();
    }
  });
});

describe("Embed request validation (INVALID_ARGUMENT)", () => {
  const valid = {
    config: { provider: "scripted", model: "", api_key_env: "", dimensions: 8, base_url: "" },
    texts: ["one text"],
    task: "document",
    session_id: "",
  };

  it("accepts the valid request the cases below break", async () => {
    expect(await rawEmbed(h.address, valid)).toEqual({ code: grpc.status.OK, details: "" });
  });

  it.each([
    ["no texts", { texts: [] }, "texts must not be empty"],
    ["101 texts", { texts: Array.from({ length: 101 }, (_, i) => `t${i}`) }, "at most 100 texts"],
    ["an empty text", { texts: ["ok", " "] }, "texts.1: a text must not be empty"],
    [
      "an unknown provider",
      { config: { ...valid.config, provider: "anthropic" } },
      'config.provider: unknown provider "anthropic"',
    ],
    [
      "negative dimensions",
      { config: { ...valid.config, dimensions: -1 } },
      "dimensions must not be negative",
    ],
    [
      "dimensions above 4096",
      { config: { ...valid.config, dimensions: 4097 } },
      "dimensions must be at most 4096",
    ],
    [
      "a google config without a model",
      { config: { ...valid.config, provider: "google" } },
      "config.model: model is required",
    ],
    ["an unknown task", { task: "search" }, 'task must be "document"'],
  ])("rejects %s", async (_name, change, message) => {
    const result = await rawEmbed(h.address, { ...valid, ...change });
    expect(result.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(result.details).toContain("invalid EmbedRequest");
    expect(result.details).toContain(message);
  });
});
