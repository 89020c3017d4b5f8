import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { builtinLlmProviders } from "@tarsy/config";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { anthropicStream } from "./fakes/anthropic.ts";
import { geminiChunk, geminiUsage } from "./fakes/gemini.ts";
import { type FakeOAuth, JWT_BEARER_GRANT } from "./fakes/google-oauth.ts";
import { type FakeProvider, respondSse } from "./fakes/http.ts";
import {
  baseInput,
  collect,
  type Harness,
  POD_TOOL,
  startHarness,
  textOf,
  toolCallsOf,
  usageOf,
} from "./harness.ts";
import {
  type Config,
  claudeOn,
  type ServiceAccount,
  startVertexStack,
  type VertexStack,
} from "./vertex-harness.ts";

const CLOUD_PLATFORM = "https://www.googleapis.com/auth/cloud-platform";
let stack: VertexStack;
let vertex: FakeProvider;
let oauth: FakeOAuth;
let h: Harness;
let account: ServiceAccount;
let keyDir: string;

const claude = (over: Partial<Config> = {}) => claudeOn(vertex, over);
const gemini = (over: Partial<Config> = {}): Config => claude({ model: "gemini-2.5-pro", ...over });

const claudeToolAnswer = () =>
  respondSse(
    anthropicStream({
      text: ["Listing ", "the pods."],
      toolUses: [
        { id: "toolu_v1", name: "kubernetes-server__pods_list", input: '{"namespace":"prod"}' },
      ],
      usage: { input: 31, output: 12 },
    }),
  );
const geminiToolAnswer = () =>
  respondSse([
    geminiChunk([{ text: "Listing the pods." }]),
    geminiChunk(
      [{ functionCall: { name: "kubernetes-server__pods_list", args: { namespace: "prod" } } }],
      {
        finishReason: "STOP",
        usage: geminiUsage(25, 9, 0),
      },
    ),
  ]);

beforeAll(async () => {
  keyDir = mkdtempSync(join(tmpdir(), "tarsy-vertex-"));
  const keyPath = join(keyDir, "sa.json");
  stack = await startVertexStack((account) => {
    writeFileSync(keyPath, account.json);
    return {
      VERTEX_SA_JSON: account.json,
      VERTEX_SA_PATH: keyPath,
      GCP_PROJECT: "tarsy-prod",
      GCP_LOCATION: "us-east5",
      EU_LOCATION: "europe-west4",
    };
  });
  ({ vertex, oauth, h, account } = stack);
});
afterAll(async () => {
  await stack?.stop();
  if (keyDir) rmSync(keyDir, { recursive: true, force: true });
});
beforeEach(() => {
  vertex.requests.length = 0;
});

/** The access tokens the OAuth fake handed out. */
const issuedTokens = () => oauth.grants.flatMap((g) => (g.issued ? [g.issued] : []));

describe("Claude on Vertex AI (Anthropic publisher, streamRawPredict)", () => {
  it("posts an Anthropic Messages body with a bearer token and parses the streamed tool call", async () => {
    vertex.enqueue(claudeToolAnswer());
    const chunks = await collect(h.client.generate(baseInput(claude(), { tools: [POD_TOOL] })));

    expect(textOf(chunks)).toBe("Listing the pods.");
    expect(toolCallsOf(chunks)).toEqual([
      {
        type: "tool_call",
        callId: "toolu_v1",
        name: "kubernetes-server.pods_list",
        arguments: '{"namespace":"prod"}',
      },
    ]);
    expect(usageOf(chunks)).toMatchObject({ inputTokens: 31, outputTokens: 12 });

    const req = vertex.requests[0];
    expect(req?.method).toBe("POST");
    expect(req?.path).toBe(
      "/v1/projects/tarsy-prod/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict",
    );
    expect(issuedTokens()).toContain(req?.headers.authorization?.replace("Bearer ", ""));
    expect(req?.headers.authorization).toMatch(/^Bearer ya29\.fake-token-\d+$/);
    expect(req?.headers["x-api-key"]).toBeUndefined();
    const body = req?.body as Record<string, unknown>;
    expect(body.anthropic_version).toBe("vertex-2023-10-16");
    expect(body).not.toHaveProperty("model");
    expect(body.stream).toBe(true);
    expect(body.system).toEqual([{ type: "text", text: "You are an SRE agent." }]);
    expect(body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Why is pod web-1 crashing?" }] },
    ]);
    expect(body.tools).toMatchObject([
      { name: "kubernetes-server__pods_list", input_schema: { required: ["namespace"] } },
    ]);
    expect(body).not.toHaveProperty("contents");
  });

  it("prompt caching as on Anthropic's own API: cache_control on the last tool, cache usage read", async () => {
    const eventsTool = { ...POD_TOOL, name: "kubernetes-server.events_list" };
    vertex.enqueue(
      respondSse(
        anthropicStream({
          text: ["ok"],
          usage: { input: 140, output: 20, cacheRead: 3800, cacheCreation: 300 },
        }),
      ),
    );
    const chunks = await collect(
      h.client.generate(baseInput(claude(), { tools: [POD_TOOL, eventsTool], promptCache: true })),
    );
    const body = vertex.requests[0]?.body as { tools: Record<string, unknown>[] };
    expect(body.tools.map((t) => t.cache_control ?? null)).toEqual([
      null,
      { type: "ephemeral", ttl: "1h" },
    ]);
    expect(JSON.stringify(body).match(/cache_control/g)).toHaveLength(1);
    expect(usageOf(chunks)).toMatchObject({
      inputTokens: 140,
      outputTokens: 20,
      cacheReadTokens: 3800,
      cacheCreationTokens: 300,
    });
  });

  it("signs a JWT-bearer grant with the service account's key for the cloud-platform scope", async () => {
    vertex.enqueue(claudeToolAnswer());
    await collect(h.client.generate(baseInput(claude(), { tools: [POD_TOOL] })));
    const grant = oauth.grants.at(-1);
    expect(grant).toMatchObject({
      grantType: JWT_BEARER_GRANT,
      signatureValid: true,
      header: { alg: "RS256" },
      claims: { iss: account.email, scope: CLOUD_PLATFORM },
    });
    expect(Number(grant?.claims.exp) - Number(grant?.claims.iat)).toBe(3600);
  });

  it("reuses the cached token across calls instead of signing a new grant each time", async () => {
    vertex.enqueue(claudeToolAnswer(), claudeToolAnswer());
    await collect(h.client.generate(baseInput(claude())));
    const grantsAfterFirst = oauth.grants.length;
    await collect(h.client.generate(baseInput(claude())));
    expect(oauth.grants.length).toBe(grantsAfterFirst);
    expect(vertex.requests).toHaveLength(2);
    expect(vertex.requests[1]?.headers.authorization).toBe(
      vertex.requests[0]?.headers.authorization,
    );
  });
});

describe("Gemini on Vertex AI (Google publisher, streamGenerateContent)", () => {
  it("posts Gemini contents to the project's regional endpoint and parses the function call", async () => {
    vertex.enqueue(geminiToolAnswer());
    const config = gemini({ credentialsEnv: "VERTEX_SA_PATH", locationEnv: "EU_LOCATION" });
    const chunks = await collect(h.client.generate(baseInput(config, { tools: [POD_TOOL] })));

    expect(textOf(chunks)).toBe("Listing the pods.");
    expect(toolCallsOf(chunks)).toMatchObject([
      { name: "kubernetes-server.pods_list", arguments: '{"namespace":"prod"}' },
    ]);
    expect(usageOf(chunks)).toMatchObject({ inputTokens: 25 });

    const req = vertex.requests[0];
    expect(req?.path).toBe(
      "/v1/projects/tarsy-prod/locations/europe-west4/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
    );
    expect(issuedTokens()).toContain(req?.headers.authorization?.replace("Bearer ", ""));
    expect(req?.headers["x-goog-api-key"]).toBeUndefined();
    const body = req?.body as Record<string, unknown>;
    expect(body.contents).toEqual([
      { role: "user", parts: [{ text: "Why is pod web-1 crashing?" }] },
    ]);
    expect(body.systemInstruction).toEqual({ parts: [{ text: "You are an SRE agent." }] });
    expect(body.tools).toMatchObject([
      { functionDeclarations: [{ name: "kubernetes-server__pods_list" }] },
    ]);
    expect(body).not.toHaveProperty("messages");
    expect(body).not.toHaveProperty("anthropic_version");
  });

  it("serves the google-native backend from the same credentials, project and location", async () => {
    vertex.enqueue(geminiToolAnswer());
    const config = gemini({ backend: "google-native" });
    const chunks = await collect(h.client.generate(baseInput(config, { tools: [POD_TOOL] })));
    expect(toolCallsOf(chunks)).toMatchObject([{ name: "kubernetes-server.pods_list" }]);
    const req = vertex.requests[0];
    expect(req?.path).toBe(
      "/v1/projects/tarsy-prod/locations/us-east5/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
    );
    expect(issuedTokens()).toContain(req?.headers.authorization?.replace("Bearer ", ""));
    expect(req?.body).toMatchObject({ contents: [{ role: "user" }] });
  });
});

describe("the built-in vertexai-default provider", () => {
  it("reaches Claude on Vertex with application default credentials and GOOGLE_CLOUD_* variables", async () => {
    const builtin = builtinLlmProviders().find((p) => p.name === "vertexai-default");
    expect(builtin).toBeDefined();
    if (!builtin) return;
    const adc = await startHarness({
      GOOGLE_APPLICATION_CREDENTIALS: join(keyDir, "sa.json"),
      GOOGLE_CLOUD_PROJECT: "ops-project",
      GOOGLE_CLOUD_LOCATION: "us-east5",
    });
    try {
      vertex.enqueue(claudeToolAnswer());
      // What the runner sends for this provider (names only), with the endpoint on loopback.
      const config: Config = {
        provider: builtin.type,
        model: builtin.model,
        ...(builtin.credentials_env ? { credentialsEnv: builtin.credentials_env } : {}),
        ...(builtin.project_env ? { projectEnv: builtin.project_env } : {}),
        ...(builtin.location_env ? { locationEnv: builtin.location_env } : {}),
        baseUrl: vertex.url,
      };
      const chunks = await collect(adc.client.generate(baseInput(config, { tools: [POD_TOOL] })));
      expect(toolCallsOf(chunks)).toMatchObject([{ name: "kubernetes-server.pods_list" }]);
      const req = vertex.requests[0];
      expect(req?.path).toBe(
        `/v1/projects/ops-project/locations/us-east5/publishers/anthropic/models/${builtin.model}:streamRawPredict`,
      );
      expect(issuedTokens()).toContain(req?.headers.authorization?.replace("Bearer ", ""));
      expect(req?.body).toMatchObject({ anthropic_version: "vertex-2023-10-16" });
    } finally {
      await adc.stop();
    }
  });
});
