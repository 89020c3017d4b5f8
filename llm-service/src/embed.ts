import * as grpc from "@grpc/grpc-js";
import type { ServiceMetrics } from "@tarsy/metrics";
import type { Logger } from "@tarsy/runtime";
import { resolveApiKey } from "./backends/credentials.ts";
import { embedScripted, embedWithProvider } from "./backends/embedders.ts";
import type { SecretLookup } from "./backends/types.ts";
import { EMBEDDING_PROVIDERS, EmbedRequestSchema, type EmbedResult } from "./embed-request.ts";
import { classifyError, type ErrorCode } from "./errors.ts";
import { type RetryPolicy, retryCall } from "./retry.ts";

export type EmbedCall = grpc.ServerUnaryCall<unknown, unknown>;
export type EmbedCallback = grpc.sendUnaryData<unknown>;

export interface EmbedHandlerOptions {
  logger: Logger;
  getSecret: SecretLookup;
  policy: RetryPolicy;
  /** Every request answered by the scripted embedder, whatever its provider. */
  scriptAllProviders: boolean;
  metrics: Pick<ServiceMetrics<"llm-service">, "llmEmbeddings">;
}

/** A failed Embed, as the gRPC status the caller receives. */
class EmbedFailure extends Error {
  constructor(
    readonly status: grpc.status,
    readonly outcome: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The status of a provider failure (after retries): UNAVAILABLE says "try again later",
 * FAILED_PRECONDITION "fix the key or configuration", INVALID_ARGUMENT "the provider refuses
 * this request".
 */
function statusFor(code: ErrorCode): grpc.status {
  switch (code) {
    case "rate_limited":
    case "provider_unavailable":
    case "empty_response":
      return grpc.status.UNAVAILABLE;
    case "auth":
    case "quota_exhausted":
    case "invalid_config":
    case "content_blocked":
    case "script_exhausted":
      return grpc.status.FAILED_PRECONDITION;
    case "invalid_request":
      return grpc.status.INVALID_ARGUMENT;
    case "cancelled":
      return grpc.status.CANCELLED;
    default: {
      const unreachable: never = code;
      return unreachable;
    }
  }
}

/** One vector per text, each of the size asked for (when one was). */
function checkShape(result: EmbedResult, texts: number, dimensions: number, provider: string) {
  if (result.embeddings.length !== texts) {
    throw new EmbedFailure(
      grpc.status.FAILED_PRECONDITION,
      "wrong_count",
      `provider ${provider} returned ${result.embeddings.length} embeddings for ${texts} texts`,
    );
  }
  const wrong = result.embeddings.find((vector) => vector.length !== dimensions);
  if (dimensions > 0 && wrong) {
    throw new EmbedFailure(
      grpc.status.FAILED_PRECONDITION,
      "wrong_dimensions",
      `provider ${provider} returned ${wrong.length}-dimensional embeddings, but ${dimensions} dimensions were requested: use a model that supports dimensions=${dimensions}, or set the dimensions of the embedding config to ${wrong.length}`,
    );
  }
}

/**
 * The Embed RPC: validates the request, embeds through the provider's embedding API with
 * llm-service's retries (or the scripted embedder), checks the vectors' shape and answers a
 * gRPC status on failure. Logs and counts the outcome; never logs texts or keys.
 */
export function createEmbedHandler(
  options: EmbedHandlerOptions,
): (call: EmbedCall, callback: EmbedCallback) => Promise<void> {
  const { llmEmbeddings } = options.metrics;
  return async (call, callback) => {
    const parsed = EmbedRequestSchema.safeParse(call.request);
    if (!parsed.success) {
      const details = parsed.error.issues
        .map((i) => `${i.path.join(".")}: ${i.message}`)
        .join("; ");
      const raw = (call.request as { config?: { provider?: unknown } } | null)?.config?.provider;
      // Labels stay bounded: a provider llm-service does not know counts as "unknown".
      const provider = EMBEDDING_PROVIDERS.find((p) => p === raw) ?? "unknown";
      llmEmbeddings.inc({ provider, outcome: "invalid_argument" });
      callback({ code: grpc.status.INVALID_ARGUMENT, details: `invalid EmbedRequest: ${details}` });
      return;
    }
    const request = parsed.data;
    const { config } = request;
    const scripted = options.scriptAllProviders || config.provider === "scripted";
    const log = options.logger.child({
      component: "embed",
      session_id: request.session_id,
      provider: config.provider,
      model: config.model,
      ...(scripted && config.provider !== "scripted" ? { scripted: true } : {}),
    });
    const fields = {
      count: request.texts.length,
      dimensions: config.dimensions,
      task: request.task,
    };
    const abort = new AbortController();
    const onCancel = () => abort.abort();
    call.on("cancelled", onCancel);
    if (call.cancelled) abort.abort();
    const started = performance.now();
    const ms = () => Math.round(performance.now() - started);
    try {
      let result: EmbedResult;
      if (scripted) {
        result = embedScripted(request.texts, config.dimensions);
      } else {
        // Looked up only to scrub the key from provider messages: no status or log line echoes it.
        const { apiKeyEnv, apiKey } = resolveApiKey(config, options.getSecret, true);
        result = await retryCall(
          () => embedWithProvider(request, { getSecret: options.getSecret, signal: abort.signal }),
          {
            policy: options.policy,
            classify: { provider: config.provider, apiKeyEnv, secrets: apiKey ? [apiKey] : [] },
            signal: abort.signal,
            logger: log,
          },
        ).catch((err: unknown) => {
          const error = classifyError(err, {
            provider: config.provider,
            apiKeyEnv,
            secrets: apiKey ? [apiKey] : [],
            signal: abort.signal,
          });
          throw new EmbedFailure(statusFor(error.code), error.code, error.message);
        });
      }
      checkShape(result, request.texts.length, config.dimensions, config.provider);
      llmEmbeddings.inc({ provider: config.provider, outcome: "ok" });
      log.info({ ...fields, input_tokens: result.inputTokens, ms: ms() }, "embed finished");
      callback(null, {
        embeddings: result.embeddings.map((values) => ({ values })),
        input_tokens: result.inputTokens,
      });
    } catch (err) {
      const failure =
        err instanceof EmbedFailure
          ? err
          : new EmbedFailure(grpc.status.INTERNAL, "internal", "internal error in llm-service");
      if (!(err instanceof EmbedFailure)) log.error({ err }, "unexpected error in Embed");
      llmEmbeddings.inc({ provider: config.provider, outcome: failure.outcome });
      if (failure.outcome === "cancelled" || abort.signal.aborted) {
        log.info(
          { ...fields, ms: ms() },
          "embed cancelled by the caller; provider request aborted",
        );
        return;
      }
      log.warn(
        { ...fields, ms: ms(), code: failure.outcome, error: failure.message },
        "embed failed",
      );
      callback({ code: failure.status, details: failure.message });
    } finally {
      call.off("cancelled", onCancel);
    }
  };
}
