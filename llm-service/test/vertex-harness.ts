import type { GenerateInput } from "@tarsy/llm-client";
import { type FakeOAuth, serviceAccount, startFakeOAuth } from "./fakes/google-oauth.ts";
import { type FakeProvider, startFakeProvider } from "./fakes/http.ts";
import { type Harness, startHarness } from "./harness.ts";

export type Config = GenerateInput["config"];
export type ServiceAccount = ReturnType<typeof serviceAccount>;

/** Vertex AI on loopback: its endpoint, Google's token endpoint and llm-service in front. */
export interface VertexStack {
  /** The fake Vertex AI endpoint (both publishers). */
  vertex: FakeProvider;
  /** The fake token endpoint; it trusts `account`. */
  oauth: FakeOAuth;
  /** A service account of project `sa-own-project`. */
  account: ServiceAccount;
  h: Harness;
  stop(): Promise<void>;
}

/**
 * Starts the fakes, then llm-service with the secrets `secretsOf` gives for the trusted
 * account (it may make more accounts with `oauth.tokenUri`; those are not trusted).
 */
export async function startVertexStack(
  secretsOf: (account: ServiceAccount, oauth: FakeOAuth) => Record<string, string>,
): Promise<VertexStack> {
  const vertex = await startFakeProvider();
  const oauth = await startFakeOAuth();
  const account = serviceAccount(oauth.tokenUri);
  oauth.trust(account.publicKey);
  const h = await startHarness(secretsOf(account, oauth));
  return {
    vertex,
    oauth,
    account,
    h,
    async stop() {
      await h.stop();
      await vertex.close();
      await oauth.close();
    },
  };
}

/** A Claude model on Vertex AI, credentials, project and location from the usual variables. */
export const claudeOn = (vertex: FakeProvider, over: Partial<Config> = {}): Config => ({
  provider: "vertexai",
  model: "claude-sonnet-4-5@20250929",
  credentialsEnv: "VERTEX_SA_JSON",
  projectEnv: "GCP_PROJECT",
  locationEnv: "GCP_LOCATION",
  baseUrl: vertex.url,
  ...over,
});
