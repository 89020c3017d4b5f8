import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { anthropicStream } from "./fakes/anthropic.ts";
import { geminiChunk } from "./fakes/gemini.ts";
import { type FakeOAuth, serviceAccount } from "./fakes/google-oauth.ts";
import { type FakeProvider, respondJson, respondSse } from "./fakes/http.ts";
import { baseInput, collect, errorOf, type Harness, textOf } from "./harness.ts";
import { type Config, claudeOn, startVertexStack, type VertexStack } from "./vertex-harness.ts";

let stack: VertexStack;
let vertex: FakeProvider;
let oauth: FakeOAuth;
let h: Harness;

const claude = (over: Partial<Config> = {}) => claudeOn(vertex, over);

beforeAll(async () => {
  stack = await startVertexStack((trusted, oauth) => ({
    VERTEX_SA_JSON: trusted.json,
    // A well-formed key Google does not know (its public half is never trusted).
    REVOKED_SA_JSON: serviceAccount(oauth.tokenUri, "revoked-project").json,
    NOT_A_KEY: "definitely-not-a-key-or-a-file",
    GCP_PROJECT: "tarsy-prod",
    GCP_LOCATION: "us-east5",
    BAD_LOCATION: "evil.example.com/x#",
  }));
  ({ vertex, oauth, h } = stack);
});
afterAll(async () => {
  await stack?.stop();
});
beforeEach(() => {
  vertex.requests.length = 0;
});

describe("Vertex AI configuration that cannot work is refused before any request", () => {
  it.each([
    [{ credentialsEnv: "VERTEX_SA_MISSING" }, "VERTEX_SA_MISSING"],
    [{ projectEnv: "GCP_PROJECT_MISSING" }, "GCP_PROJECT_MISSING"],
    [{ locationEnv: "GCP_LOCATION_MISSING" }, "GCP_LOCATION_MISSING"],
  ])(
    "an unset variable named by the config (%o) is an invalid_config error",
    async (over, name) => {
      const grantsBefore = oauth.grants.length;
      const chunks = await collect(h.client.generate(baseInput(claude(over))));
      expect(errorOf(chunks)).toMatchObject({ code: "invalid_config", retryable: false });
      expect(errorOf(chunks)?.message).toContain(`environment variable ${name}`);
      expect(vertex.requests).toHaveLength(0);
      expect(oauth.grants.length).toBe(grantsBefore);
    },
  );

  it("a credentials variable holding neither a key nor a readable path is named, never echoed", async () => {
    const chunks = await collect(
      h.client.generate(baseInput(claude({ credentialsEnv: "NOT_A_KEY" }))),
    );
    const error = errorOf(chunks);
    expect(error).toMatchObject({ code: "invalid_config", retryable: false });
    expect(error?.message).toContain("NOT_A_KEY");
    expect(error?.message).not.toContain("definitely-not-a-key-or-a-file");
    expect(vertex.requests).toHaveLength(0);
  });

  it("a location that is not a GCP location never reaches a host name", async () => {
    const chunks = await collect(
      h.client.generate(baseInput(claude({ locationEnv: "BAD_LOCATION", baseUrl: "" }))),
    );
    expect(errorOf(chunks)).toMatchObject({ code: "invalid_config" });
    expect(errorOf(chunks)?.message).toContain("not a valid location");
  });

  it("the google-native backend refuses a Claude model (it speaks Gemini only)", async () => {
    const chunks = await collect(
      h.client.generate(baseInput(claude({ backend: "google-native" }))),
    );
    expect(errorOf(chunks)).toMatchObject({ code: "invalid_config" });
    expect(errorOf(chunks)?.message).toContain("langchain backend");
    expect(vertex.requests).toHaveLength(0);
  });
});

describe("Vertex AI credentials at run time", () => {
  it("a key the token endpoint refuses is an auth error, not retried, and Vertex is never called", async () => {
    const grantsBefore = oauth.grants.length;
    const chunks = await collect(
      h.client.generate(baseInput(claude({ credentialsEnv: "REVOKED_SA_JSON" }))),
    );
    const error = errorOf(chunks);
    expect(error).toMatchObject({ code: "auth", retryable: false });
    expect(error?.message).toContain("REVOKED_SA_JSON");
    expect(error?.message).toContain("invalid_grant");
    expect(oauth.grants.length).toBe(grantsBefore + 1);
    expect(oauth.grants.at(-1)?.signatureValid).toBe(false);
    expect(vertex.requests).toHaveLength(0);
  });

  it("Vertex refusing the token (403) points at the credentials and IAM, without retrying", async () => {
    vertex.enqueue(
      respondJson(403, {
        error: {
          code: 403,
          message: "Permission denied on resource project tarsy-prod.",
          status: "PERMISSION_DENIED",
        },
      }),
    );
    const chunks = await collect(h.client.generate(baseInput(claude())));
    const error = errorOf(chunks);
    expect(error).toMatchObject({ code: "auth", retryable: false });
    expect(error?.message).toContain("VERTEX_SA_JSON");
    expect(error?.message).toContain("roles/aiplatform.user");
    expect(vertex.requests).toHaveLength(1);
  });

  it("without project_env, the project comes from the service account key", async () => {
    vertex.enqueue(respondSse(anthropicStream({ text: ["fine"] })));
    const chunks = await collect(h.client.generate(baseInput(claude({ projectEnv: "" }))));
    expect(textOf(chunks)).toBe("fine");
    expect(vertex.requests[0]?.path).toBe(
      "/v1/projects/sa-own-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict",
    );
  });

  it("without location_env, Gemini goes to TARSy's default location us-east5", async () => {
    vertex.enqueue(respondSse([geminiChunk([{ text: "fine" }], { finishReason: "STOP" })]));
    const config = claude({ model: "gemini-2.5-flash", locationEnv: "" });
    const chunks = await collect(h.client.generate(baseInput(config)));
    expect(textOf(chunks)).toBe("fine");
    expect(vertex.requests[0]?.path).toBe(
      "/v1/projects/tarsy-prod/locations/us-east5/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
    );
  });
});
