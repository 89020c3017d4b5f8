import * as grpc from "@grpc/grpc-js";
import { createMetrics, type ServiceMetrics } from "@tarsy/metrics";
import type { Logger } from "@tarsy/runtime";
import { createAiSdkBackend } from "./backends/ai-sdk.ts";
import { resolveApiKey } from "./backends/credentials.ts";
import { createGoogleNativeBackend } from "./backends/google-native.ts";
import type { Script } from "./backends/script.ts";
import { createScriptedBackend } from "./backends/scripted.ts";
import type { Backend, SecretLookup } from "./backends/types.ts";
import { ADC_FILE_ENV, createVertexCredentialStore } from "./backends/vertex-auth.ts";
import { createEmbedHandler, type EmbedCall, type EmbedCallback } from "./embed.ts";
import { CancelledError, classifyError, type LlmServiceError } from "./errors.ts";
import { createHealthService, type ServingStatus } from "./health.ts";
import { loadProtos } from "./proto.ts";
import { type Chunk, type GenerateRequest, GenerateRequestSchema } from "./request.ts";
import { DEFAULT_RETRY_POLICY, type RetryPolicy, withRetry } from "./retry.ts";

export const LLM_SERVICE_NAME = "llm.v1.LLMService";

export interface LlmServerOptions {
  logger: Logger;
  /** Reads the environment variable a request's api_key_env names. */
  getSecret: SecretLookup;
  retry?: Partial<RetryPolicy>;
  /** Script for the scripted backend (from LLM_SCRIPT_PATH). */
  script?: Script;
  /** Every request goes to the scripted backend (Embed: the scripted embedder), whatever its provider. */
  scriptAllProviders?: boolean;
  /** Largest request accepted (a whole conversation); default 64 MiB. */
  maxRequestBytes?: number;
  /** Default: a registry of its own that nobody scrapes (tests). */
  metrics?: Pick<ServiceMetrics<"llm-service">, "llmErrors" | "llmEmbeddings">;
}

export interface LlmServer {
  /** Binds host:port (port 0 = any free port) and returns the bound port. */
  listen(host: string, port: number): Promise<number>;
  /** What the gRPC health service answers for the whole server (`SERVING` until shutdown). */
  servingStatus(): ServingStatus;
  /** Reports NOT_SERVING, lets in-flight streams finish (bounded), then stops. */
  shutdown(graceMs?: number): Promise<void>;
}

type GenerateCall = grpc.ServerWritableStream<unknown, unknown>;

/** With Google credentials, a 401/403 points at the credentials and the project's IAM. */
function vertexAuthHint(config: GenerateRequest["llm_config"]): { authHint?: string } {
  if (config.provider !== "vertexai" || config.api_key_env) return {};
  const source = config.credentials_env || `${ADC_FILE_ENV} (application default credentials)`;
  return {
    authHint: `check the Google credentials from ${source} and that their principal may use Vertex AI (roles/aiplatform.user) in the project`,
  };
}

function resolveBackendName(request: GenerateRequest, scriptAll: boolean): string {
  if (scriptAll || request.llm_config.provider === "scripted") return "scripted";
  return request.llm_config.backend || "langchain";
}

/** Writes one message, waiting for drain under backpressure (or until the caller leaves). */
async function write(call: GenerateCall, message: unknown, signal: AbortSignal): Promise<void> {
  if (call.write(message) || signal.aborted) return;
  await new Promise<void>((resolve) => {
    const done = () => {
      call.off("drain", done);
      signal.removeEventListener("abort", done);
      resolve();
    };
    call.once("drain", done);
    signal.addEventListener("abort", done, { once: true });
  });
}

export function createLlmServer(options: LlmServerOptions): LlmServer {
  const { logger } = options;
  const metrics = options.metrics ?? createMetrics("llm-service", { processMetrics: false });
  const { llmErrors } = metrics;
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  const embed = createEmbedHandler({
    logger,
    getSecret: options.getSecret,
    policy,
    scriptAllProviders: options.scriptAllProviders === true,
    metrics,
  });
  const vertexCredentials = createVertexCredentialStore(options.getSecret);
  const backends = new Map<string, Backend>(
    [
      createAiSdkBackend({ getSecret: options.getSecret, vertexCredentials }),
      createGoogleNativeBackend({ getSecret: options.getSecret, vertexCredentials }),
      createScriptedBackend(options.script ? { defaultScript: options.script } : {}),
    ].map((b) => [b.name, b]),
  );
  const health = createHealthService({ "": "SERVING", [LLM_SERVICE_NAME]: "SERVING" });
  const inFlight = new Set<Promise<void>>();

  const generate = async (call: GenerateCall): Promise<void> => {
    const parsed = GenerateRequestSchema.safeParse(call.request);
    if (!parsed.success) {
      const details = parsed.error.issues
        .map((i) => `${i.path.join(".")}: ${i.message}`)
        .join("; ");
      call.emit("error", {
        code: grpc.status.INVALID_ARGUMENT,
        details: `invalid GenerateRequest: ${details}`,
      });
      return;
    }
    const request = parsed.data;
    const backendName = resolveBackendName(request, options.scriptAllProviders === true);
    const backend = backends.get(backendName);
    const log = logger.child({
      session_id: request.session_id,
      execution_id: request.execution_id,
      agent_name: request.agent_name,
      backend: backendName,
      provider: request.llm_config.provider,
      model: request.llm_config.model,
    });
    const errorLabels = { provider: request.llm_config.provider, model: request.llm_config.model };
    if (!backend) {
      llmErrors.inc({ ...errorLabels, code: "invalid_config" });
      call.emit("error", {
        code: grpc.status.INVALID_ARGUMENT,
        details: `unknown llm_config.backend "${backendName}": use langchain, google-native or scripted`,
      });
      return;
    }
    const abort = new AbortController();
    const onCancel = () => abort.abort();
    call.on("cancelled", onCancel);
    if (call.cancelled) abort.abort();
    const started = performance.now();
    let chunks = 0;
    log.debug(
      { messages: request.messages.length, tools: request.tools.length },
      "generate started",
    );
    // The key is looked up here only to scrub it from provider messages (backends read it
    // themselves): no error chunk or log line can echo it back.
    const { apiKeyEnv, apiKey } = resolveApiKey(request.llm_config, options.getSecret, true);
    const classify = {
      provider: request.llm_config.provider,
      apiKeyEnv,
      secrets: apiKey ? [apiKey] : [],
      ...vertexAuthHint(request.llm_config),
    };
    const ctx = { signal: abort.signal, logger: log };
    const stream: AsyncIterable<Chunk> = withRetry(() => backend.generate(request, ctx), {
      policy: backend.retriesTransientErrors ? policy : { ...policy, maxRetries: 0 },
      classify,
      signal: abort.signal,
      logger: log,
    });
    try {
      for await (const chunk of stream) {
        if (abort.signal.aborted) break;
        chunks++;
        // A backend may report a provider's error in-band instead of throwing.
        if ("error" in chunk) llmErrors.inc({ ...errorLabels, code: chunk.error.code });
        await write(call, chunk, abort.signal);
      }
      if (abort.signal.aborted) throw new CancelledError("request cancelled by the caller");
      await write(call, { is_final: true }, abort.signal);
      call.end();
      log.info({ chunks, ms: Math.round(performance.now() - started) }, "generate finished");
    } catch (err) {
      const error: LlmServiceError = classifyError(err, { ...classify, signal: abort.signal });
      if (error.code === "cancelled" || abort.signal.aborted) {
        log.info({ chunks }, "generate cancelled by the caller; provider request aborted");
        return;
      }
      llmErrors.inc({ ...errorLabels, code: error.code });
      log.warn(
        { code: error.code, retryable: error.retryable, error: error.message },
        "generate failed",
      );
      await write(
        call,
        {
          error: {
            message: error.message,
            code: error.code,
            retryable: error.retryable,
            partial_output: error.partialOutput || chunks > 0,
            retries_exhausted: error.retriesExhausted,
          },
          is_final: true,
        },
        abort.signal,
      );
      call.end();
    } finally {
      call.off("cancelled", onCancel);
    }
  };

  const protos = loadProtos();
  const server = new grpc.Server({
    "grpc.max_receive_message_length": options.maxRequestBytes ?? 64 * 1024 * 1024,
  });
  server.addService(protos.llmService, {
    Generate: (call: GenerateCall) => {
      const task = generate(call).catch((err: unknown) => {
        logger.error({ err }, "unexpected error in Generate");
        call.emit("error", {
          code: grpc.status.INTERNAL,
          details: "internal error in llm-service",
        });
      });
      inFlight.add(task);
      void task.finally(() => inFlight.delete(task));
    },
    Embed: (call: EmbedCall, callback: EmbedCallback) => {
      const task = embed(call, callback).catch((err: unknown) => {
        logger.error({ err }, "unexpected error in Embed");
        callback({ code: grpc.status.INTERNAL, details: "internal error in llm-service" });
      });
      inFlight.add(task);
      void task.finally(() => inFlight.delete(task));
    },
  });
  server.addService(protos.healthService, health.handlers);

  return {
    listen: (host, port) =>
      new Promise((resolve, reject) => {
        server.bindAsync(
          `${host}:${port}`,
          grpc.ServerCredentials.createInsecure(),
          (err, bound) => (err ? reject(err) : resolve(bound)),
        );
      }),
    servingStatus: () => health.status(""),
    async shutdown(graceMs = 10_000) {
      health.setStatus("", "NOT_SERVING");
      health.setStatus(LLM_SERVICE_NAME, "NOT_SERVING");
      const drained = Promise.allSettled([...inFlight]);
      const timer = new Promise((resolve) => setTimeout(resolve, graceMs).unref());
      await Promise.race([drained, timer]);
      const graceful = new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
      await Promise.race([graceful, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
      server.forceShutdown();
    },
  };
}
