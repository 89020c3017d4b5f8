/**
 * Errors a backend raises while talking to a provider. Each knows whether the service may
 * retry it and becomes an ErrorInfo chunk ({ message, code, retryable }) on the wire.
 */
export abstract class LlmServiceError extends Error {
  abstract readonly code: ErrorCode;
  abstract readonly retryable: boolean;
  /** Output had reached the caller before the failure (a partial stream). */
  partialOutput = false;
  /** A transient error that llm-service will not retry again (for the runner's fallback). */
  retriesExhausted = false;
  /** How long the provider asked to wait before a retry (Retry-After, RetryInfo), if it said. */
  retryAfterMs: number | undefined;
}

export type ErrorCode =
  | "rate_limited"
  | "quota_exhausted"
  | "provider_unavailable"
  | "empty_response"
  | "auth"
  | "invalid_config"
  | "invalid_request"
  | "content_blocked"
  | "script_exhausted"
  | "cancelled";

/** HTTP 429 from the provider. */
export class RateLimitedError extends LlmServiceError {
  readonly code = "rate_limited" as const;
  readonly retryable = true as const;
}

/**
 * A 429 that no wait fixes: the account's quota, credits or spending cap is used up (or the
 * provider said not to retry, or asked for a wait longer than a retry may take). Not retried:
 * the runner moves to the next fallback provider at once.
 */
export class QuotaExhaustedError extends LlmServiceError {
  readonly code = "quota_exhausted" as const;
  readonly retryable = false as const;
}

/** 5xx, 408, network failure, or a stream that dropped before any output. */
export class ProviderUnavailableError extends LlmServiceError {
  readonly code = "provider_unavailable" as const;
  readonly retryable = true as const;
}

/** The provider answered with nothing: no text, thinking, tool call or code. */
export class EmptyResponseError extends LlmServiceError {
  readonly code = "empty_response" as const;
  readonly retryable = true as const;
}

/** 401/403: the key is missing, wrong or lacks permission. */
export class AuthError extends LlmServiceError {
  readonly code = "auth" as const;
  readonly retryable = false as const;
}

/** The LLM configuration cannot work (missing env var, unknown provider, bad base URL …). */
export class ConfigError extends LlmServiceError {
  readonly code = "invalid_config" as const;
  readonly retryable = false as const;
}

/** 400/404/422: the provider rejected the request itself (unknown model, bad schema …). */
export class ProviderRequestError extends LlmServiceError {
  readonly code = "invalid_request" as const;
  readonly retryable = false as const;
}

/** The provider's safety filters blocked the prompt or the answer; retrying will not help. */
export class ContentBlockedError extends LlmServiceError {
  readonly code = "content_blocked" as const;
  readonly retryable = false as const;
}

/** The scripted backend has no entry left for this request. */
export class ScriptExhaustedError extends LlmServiceError {
  readonly code = "script_exhausted" as const;
  readonly retryable = false as const;
}

/** The caller went away (gRPC cancel or deadline); nothing is sent back. */
export class CancelledError extends LlmServiceError {
  readonly code = "cancelled" as const;
  readonly retryable = false as const;
}

export interface ClassifyContext {
  provider: string;
  apiKeyEnv: string;
  /** Every secret value that must never appear in a message (the API key). */
  secrets: string[];
  /** What to check when the provider refuses the caller (default: the API key variable). */
  authHint?: string;
  signal: AbortSignal;
}

/** Removes secret values from a provider's message (OpenAI echoes a prefix of bad keys). */
export function scrubSecrets(text: string, secrets: string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length >= 4) out = out.split(secret).join("[REDACTED]");
  }
  return out;
}

function statusOf(err: unknown): number | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const e = err as { statusCode?: unknown; status?: unknown };
  if (typeof e.statusCode === "number") return e.statusCode;
  if (typeof e.status === "number") return e.status;
  return undefined;
}

/** The longest wait a provider's retry hint may ask for; a longer one is not waited out. */
export const MAX_RETRY_HINT_MS = 60_000;

type Headers = Record<string, string | undefined>;

/** The response headers of an SDK error (AI SDK: `responseHeaders`), lower-cased. */
function headersOf(err: unknown): Headers {
  if (typeof err !== "object" || err === null) return {};
  const raw = (err as { responseHeaders?: unknown }).responseHeaders;
  if (typeof raw !== "object" || raw === null) return {};
  const out: Headers = {};
  for (const [key, value] of Object.entries(raw)) {
    if (typeof value === "string") out[key.toLowerCase()] = value;
  }
  return out;
}

/** The error body as text (AI SDK: `responseBody`; @google/genai puts it in the message). */
function bodyOf(err: unknown): string {
  if (typeof err !== "object" || err === null) return "";
  const body = (err as { responseBody?: unknown }).responseBody;
  if (typeof body === "string") return body;
  return err instanceof Error ? err.message : "";
}

/**
 * The wait a provider asked for: `retry-after-ms`, `Retry-After` (delta-seconds or an
 * HTTP-date; one in the past is no hint) or Google's `RetryInfo.retryDelay` (`"53s"`) in the
 * error details. Undefined when it said nothing usable.
 */
export function retryHintMs(err: unknown, now: number = Date.now()): number | undefined {
  const headers = headersOf(err);
  const ms = Number(headers["retry-after-ms"]);
  if (headers["retry-after-ms"] !== undefined && Number.isFinite(ms) && ms > 0) return ms;
  const after = headers["retry-after"]?.trim();
  if (after) {
    if (/^\d+(\.\d+)?$/.test(after)) {
      const seconds = Number(after);
      if (seconds > 0) return Math.round(seconds * 1000);
    } else {
      const at = Date.parse(after);
      if (!Number.isNaN(at) && at > now) return at - now;
    }
  }
  const delay = /"retryDelay"\s*:\s*"(\d+(?:\.\d+)?)s"/.exec(bodyOf(err));
  if (delay?.[1]) {
    const seconds = Number(delay[1]);
    if (seconds > 0) return Math.round(seconds * 1000);
  }
  return undefined;
}

/** Quota, credit or billing exhaustion as providers word it (OpenAI, Anthropic, Google, xAI). */
const SPEND_CAP_RE =
  /insufficient_quota|usage_limit_reached|billing_hard_limit|exceeded your current quota|credit balance is too low|spending (cap|limit)|billing/i;

/**
 * A 429 that waiting does not fix: the provider said `x-should-retry: false`, the body names
 * an exhausted quota, credits or billing, or the hinted wait is longer than a retry may take.
 */
export function isSpendCap(err: unknown, hintMs: number | undefined): boolean {
  if (headersOf(err)["x-should-retry"]?.toLowerCase() === "false") return true;
  if (hintMs !== undefined && hintMs > MAX_RETRY_HINT_MS) return true;
  return SPEND_CAP_RE.test(bodyOf(err));
}

function shortMessage(err: unknown): string {
  const raw = err instanceof Error ? err.message : String(err);
  return raw.length > 500 ? `${raw.slice(0, 500)}…` : raw;
}

/** AI SDK errors that no retry can fix (the request itself is wrong). */
const PERMANENT_SDK_ERRORS = new Set([
  "AI_InvalidPromptError",
  "AI_InvalidArgumentError",
  "AI_UnsupportedFunctionalityError",
  "AI_LoadAPIKeyError",
  "AI_LoadSettingError",
  "AI_NoSuchModelError",
]);

/** Maps any SDK/network error to one LlmServiceError with an actionable message. */
export function classifyError(err: unknown, ctx: ClassifyContext): LlmServiceError {
  if (err instanceof LlmServiceError) return err;
  if (ctx.signal.aborted) return new CancelledError("request cancelled by the caller");
  const status = statusOf(err);
  const detail = scrubSecrets(shortMessage(err), ctx.secrets);
  const where = `provider ${ctx.provider}`;
  if (/Could not load the default credentials/i.test(detail)) {
    return new AuthError(
      `${where} needs Google credentials: set GOOGLE_APPLICATION_CREDENTIALS (or run on GCP with a service account) for llm-service, or set llm_config.api_key_env to a variable holding a Vertex AI API key. Provider said: ${detail}`,
    );
  }
  // Gemini answers a bad key with 400 INVALID_ARGUMENT "API key not valid" (API_KEY_INVALID).
  const badKey = status === 400 && /API_KEY_INVALID|API key not valid/i.test(detail);
  if (status === 401 || status === 403 || badKey) {
    if (ctx.authHint) {
      return new AuthError(
        `${where} refused the request (HTTP ${status}): ${ctx.authHint}. Provider said: ${detail}`,
      );
    }
    return new AuthError(
      `${where} rejected the API key (HTTP ${status}): check that environment variable ` +
        `${ctx.apiKeyEnv || "(none configured)"} of llm-service holds a valid key with access ` +
        `to this model, or set llm_config.api_key_env to the variable that does. Provider said: ${detail}`,
    );
  }
  if (status === 429) {
    const hint = retryHintMs(err);
    if (isSpendCap(err, hint)) {
      return new QuotaExhaustedError(
        `${where} refused the request (HTTP 429, quota or spending cap exhausted; not retried): ${detail}`,
      );
    }
    const limited = new RateLimitedError(`${where} rate limited the request (HTTP 429): ${detail}`);
    limited.retryAfterMs = hint;
    return limited;
  }
  if (status === 408 || (status !== undefined && status >= 500)) {
    const unavailable = new ProviderUnavailableError(`${where} failed (HTTP ${status}): ${detail}`);
    const hint = retryHintMs(err);
    if (hint !== undefined && hint <= MAX_RETRY_HINT_MS) unavailable.retryAfterMs = hint;
    return unavailable;
  }
  if (status !== undefined && status >= 400) {
    return new ProviderRequestError(
      `${where} rejected the request (HTTP ${status}); check the model name, base_url and tool schemas: ${detail}`,
    );
  }
  const name = err instanceof Error ? err.name : "";
  if (PERMANENT_SDK_ERRORS.has(name)) {
    return new ProviderRequestError(
      `${where}: the request cannot be sent as configured: ${detail}`,
    );
  }
  // Network failures, dropped or malformed streams: transient.
  return new ProviderUnavailableError(`${where} call failed: ${detail}`);
}
