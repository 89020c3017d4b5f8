import { randomUUID } from "node:crypto";
import { AnthropicMessagesLanguageModel } from "@ai-sdk/anthropic/internal";
import { GoogleGenerativeAILanguageModel } from "@ai-sdk/google/internal";
import { ConfigError } from "../errors.ts";
import type { LlmConfig } from "../request.ts";
import type { ProviderModel } from "./ai-sdk-models.ts";
import type { SecretLookup } from "./types.ts";
import type { VertexCredentials } from "./vertex-auth.ts";

/** TARSy's location when none is configured: where Claude models are served on Vertex AI. */
export const DEFAULT_VERTEX_LOCATION = "us-east5";
/** The Anthropic Messages API version Vertex AI expects in the body. */
export const VERTEX_ANTHROPIC_VERSION = "vertex-2023-10-16";

export type VertexPublisher = "google" | "anthropic";

/** Claude models live under Anthropic's publisher; everything else is Google's (TARSy's rule). */
export function vertexPublisherFor(model: string): VertexPublisher {
  const name = model.toLowerCase();
  return name.includes("claude") || name.includes("anthropic") ? "anthropic" : "google";
}

/** Where a Vertex AI request goes: everything up to `/publishers/{publisher}`. */
export interface VertexTarget {
  project: string;
  location: string;
  publisher: VertexPublisher;
  baseURL: string;
}

/** A location is part of the host name: only Google's region spelling is accepted. */
const LOCATION_RE = /^[a-z][a-z0-9-]{0,62}$/;
/** Project ids, including domain-scoped ones (`example.com:project`). */
const PROJECT_RE = /^[a-z0-9][a-z0-9.:-]{0,127}$/;
/** Publisher model ids, with an optional `@version` (claude-sonnet-4-5@20250929). */
const MODEL_RE = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/;

function fromNamedEnv(
  getSecret: SecretLookup,
  variable: string,
  field: string,
  what: string,
): string | undefined {
  if (!variable) return undefined;
  const value = getSecret(variable)?.trim();
  if (!value) {
    throw new ConfigError(
      `environment variable ${variable} (named by ${field} for provider vertexai) is not set in llm-service's environment: set it to the GCP ${what}`,
    );
  }
  return value;
}

/**
 * Project: `vertex_project`, else the variable `project_env` names, else the credentials'
 * own project. Location: `vertex_location`, else the variable `location_env` names, else
 * us-east5. A variable that is named must be set. `base_url` replaces the regional host.
 */
export async function resolveVertexTarget(
  config: LlmConfig,
  getSecret: SecretLookup,
  credentials: VertexCredentials,
): Promise<VertexTarget> {
  const project =
    config.vertex_project ||
    fromNamedEnv(getSecret, config.project_env, "project_env", "project id") ||
    (await credentials.projectId());
  if (!project) {
    throw new ConfigError(
      `no GCP project for Vertex AI: set project_env in llm-providers.yaml to a variable holding the project id (e.g. GOOGLE_CLOUD_PROJECT), or use credentials that carry a project_id`,
    );
  }
  const location =
    config.vertex_location ||
    fromNamedEnv(getSecret, config.location_env, "location_env", "location (e.g. us-east5)") ||
    DEFAULT_VERTEX_LOCATION;
  if (!PROJECT_RE.test(project)) {
    throw new ConfigError(`GCP project "${project}" is not a valid project id`);
  }
  if (!LOCATION_RE.test(location)) {
    throw new ConfigError(`GCP location "${location}" is not a valid location (e.g. us-east5)`);
  }
  if (!MODEL_RE.test(config.model)) {
    throw new ConfigError(`"${config.model}" is not a Vertex AI publisher model id`);
  }
  const host = config.base_url
    ? config.base_url.replace(/\/+$/, "")
    : location === "global"
      ? "https://aiplatform.googleapis.com"
      : `https://${location}-aiplatform.googleapis.com`;
  const publisher = vertexPublisherFor(config.model);
  return {
    project,
    location,
    publisher,
    baseURL: `${host}/v1/projects/${encodeURIComponent(project)}/locations/${location}/publishers/${publisher}`,
  };
}

/**
 * The AI SDK model for a Vertex AI publisher, each in its own wire format: Gemini's
 * `:streamGenerateContent?alt=sse` (Gemini contents), Anthropic's `:streamRawPredict`
 * (Messages API body with `anthropic_version`, no `model`). Every request carries a bearer
 * token from the credentials (fetched per request; google-auth-library caches it).
 */
export function vertexModel(
  config: LlmConfig,
  target: VertexTarget,
  credentials: VertexCredentials,
): ProviderModel {
  const headers = async (): Promise<Record<string, string>> => ({
    authorization: `Bearer ${await credentials.accessToken()}`,
  });
  if (target.publisher === "anthropic") {
    return new AnthropicMessagesLanguageModel(config.model, {
      provider: "anthropic.vertex.messages",
      baseURL: `${target.baseURL}/models`,
      headers,
      buildRequestUrl: (baseURL, isStreaming) =>
        `${baseURL}/${config.model}:${isStreaming ? "streamRawPredict" : "rawPredict"}`,
      transformRequestBody: (args) => {
        const { model: _model, ...body } = args;
        return { ...body, anthropic_version: VERTEX_ANTHROPIC_VERSION };
      },
      supportsNativeStructuredOutput: false,
      supportsStrictTools: false,
    }) as unknown as ProviderModel;
  }
  return new GoogleGenerativeAILanguageModel(config.model, {
    provider: "google.vertex.chat",
    baseURL: target.baseURL,
    headers,
    generateId: () => randomUUID(),
  }) as unknown as ProviderModel;
}
