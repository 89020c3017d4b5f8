import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { type AuthClient, GoogleAuth, gaxios } from "google-auth-library";
import { AuthError, ConfigError, ProviderUnavailableError } from "../errors.ts";
import type { LlmConfig } from "../request.ts";
import type { SecretLookup } from "./types.ts";

export const CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform";
/** Application default credentials read a key file from here (Google's convention). */
export const ADC_FILE_ENV = "GOOGLE_APPLICATION_CREDENTIALS";
/** The token endpoint google-auth-library signs service-account grants for. */
const GOOGLE_TOKEN_URL = "https://oauth2.googleapis.com/token";

/** Google credentials for Vertex AI; tokens are cached and refreshed by google-auth-library. */
export interface VertexCredentials {
  /** Where they come from, for messages: a variable name or "application default credentials". */
  readonly source: string;
  /** The library's client, when one was built from a key (genai takes it as is). */
  readonly authClient: AuthClient | undefined;
  /** A bearer token for the next request. */
  accessToken(): Promise<string>;
  /** The project the credentials belong to (`project_id` of a key), if any. */
  projectId(): Promise<string | undefined>;
}

interface KeyJson {
  type?: string;
  project_id?: string;
  token_uri?: string;
  [field: string]: unknown;
}

/**
 * Parses what a credentials variable holds: the key's JSON itself, or the path to a key file
 * (TARSy's `credentials_env` names a variable like GOOGLE_APPLICATION_CREDENTIALS, a path).
 */
export function readKey(variable: string, value: string): KeyJson {
  const trimmed = value.trim();
  let text = trimmed;
  if (!trimmed.startsWith("{")) {
    try {
      text = readFileSync(trimmed, "utf8");
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? "unreadable";
      throw new ConfigError(
        `environment variable ${variable} must hold a Google credentials JSON or the path to one; the file it names cannot be read (${code})`,
      );
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ConfigError(
      `environment variable ${variable} must hold a Google credentials JSON or the path to one; what it holds is not JSON`,
    );
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(
      `environment variable ${variable}: Google credentials must be a JSON object`,
    );
  }
  return parsed as KeyJson;
}

/**
 * A transport that sends service-account grants to the key's own `token_uri` (as Google's Go
 * and Python libraries do; the Node library always posts to Google's endpoint).
 */
function transporterFor(key: KeyJson): gaxios.Gaxios {
  const transporter = new gaxios.Gaxios();
  const tokenUri = key.token_uri;
  if (key.type === "service_account" && tokenUri && tokenUri !== GOOGLE_TOKEN_URL) {
    transporter.interceptors.request.add({
      resolved: async (options) => {
        if (options.url.href === GOOGLE_TOKEN_URL) options.url = new URL(tokenUri);
        return options;
      },
    });
  }
  return transporter;
}

/** Turns a failure to get a token into an error that says which credentials failed. */
function tokenError(source: string, err: unknown): Error {
  const e = err as { status?: number; response?: { status?: number }; message?: string };
  const status = e.response?.status ?? e.status;
  const detail = (e.message ?? String(err)).slice(0, 300);
  if (status === undefined || status === 408 || status === 429 || status >= 500) {
    return new ProviderUnavailableError(
      `could not reach Google's token endpoint for the credentials from ${source}: ${detail}`,
    );
  }
  return new AuthError(
    `Google refused the credentials from ${source} (HTTP ${status}): check the service account key and its access to Vertex AI. Google said: ${detail}`,
  );
}

function credentialsFrom(source: string, auth: GoogleAuth, client?: AuthClient) {
  const active = client ?? undefined;
  return {
    source,
    authClient: active,
    async accessToken() {
      let token: string | null | undefined;
      try {
        const c = active ?? (await auth.getClient());
        token = (await c.getAccessToken()).token;
      } catch (err) {
        if (/Could not load the default credentials/i.test(String(err))) {
          throw new AuthError(
            `no Google credentials for Vertex AI: set llm_config.credentials_env (credentials_env in llm-providers.yaml) to a variable holding a service-account key, set ${ADC_FILE_ENV} for llm-service, or run on GCP with a service account`,
          );
        }
        throw tokenError(source, err);
      }
      if (!token) throw new AuthError(`Google returned no access token for ${source}`);
      return token;
    },
    async projectId() {
      try {
        return (await auth.getProjectId()) || undefined;
      } catch {
        return undefined;
      }
    },
  } satisfies VertexCredentials;
}

/**
 * Resolves a request's Google credentials: the variable `credentials_env` names (required to be
 * set when named), else GOOGLE_APPLICATION_CREDENTIALS, else the library's application default
 * credentials (gcloud's user credentials, the GCP metadata server). Clients are kept per source
 * and content, so tokens are reused until they near expiry.
 */
export function createVertexCredentialStore(getSecret: SecretLookup) {
  const cache = new Map<string, VertexCredentials>();
  return {
    forConfig(config: LlmConfig): VertexCredentials {
      const named = config.credentials_env;
      const variable = named || ADC_FILE_ENV;
      const value = getSecret(variable);
      if (named && !value) {
        throw new ConfigError(
          `environment variable ${named} (named by credentials_env for provider vertexai) is not set in llm-service's environment: set it to a service-account JSON key or the path to one`,
        );
      }
      const digest = value ? createHash("sha256").update(value).digest("hex") : "adc";
      const cacheKey = `${variable}\u0000${digest}`;
      const cached = cache.get(cacheKey);
      if (cached) return cached;
      const scopes = [CLOUD_PLATFORM_SCOPE];
      let credentials: VertexCredentials;
      if (value) {
        const key = readKey(variable, value);
        const auth = new GoogleAuth({ scopes });
        const client = auth.fromJSON(key, { transporter: transporterFor(key) });
        const keyed = new GoogleAuth({ scopes, authClient: client });
        const source = `environment variable ${variable}`;
        credentials = {
          ...credentialsFrom(source, keyed, client),
          projectId: async () => key.project_id || undefined,
        };
      } else {
        credentials = credentialsFrom(
          "application default credentials",
          new GoogleAuth({ scopes }),
        );
      }
      cache.set(cacheKey, credentials);
      return credentials;
    },
  };
}

export type VertexCredentialStore = ReturnType<typeof createVertexCredentialStore>;
