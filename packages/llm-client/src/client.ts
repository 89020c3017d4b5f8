import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import {
  type EmbedInput,
  type EmbedOptions,
  type EmbedOutput,
  embedFromWire,
  embedToWire,
} from "./embed.ts";
import {
  fromGrpcError,
  LlmCancelledError,
  LlmInvalidArgumentError,
  LlmInvalidResponseError,
  LlmStreamIncompleteError,
} from "./errors.ts";
import {
  type ConversationMessage,
  type GenerateInput,
  GenerateInputSchema,
  GenerateResponseWireSchema,
  type LlmChunk,
} from "./types.ts";

const PROTO_DIR = fileURLToPath(new URL("../../../proto", import.meta.url));
const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
};

export interface LlmClientOptions {
  /**
   * gRPC target of llm-service: "host:port", "dns:///host:port" (every address the name
   * resolves to, e.g. a headless Kubernetes Service) or "ipv4:127.0.0.1:1,127.0.0.1:2".
   * Calls are spread round-robin over the resolved addresses.
   */
  address: string;
  /** Extra grpc-js channel options (override the defaults below). */
  channelOptions?: grpc.ChannelOptions;
}

/**
 * Round-robin over every resolved llm-service address; a replica that went away is retried
 * within seconds (grpc-js backs off up to 2 minutes by default), and a name is re-resolved
 * at most every 5 s, so replicas that restarted with new addresses are found quickly.
 */
export const DEFAULT_CHANNEL_OPTIONS: grpc.ChannelOptions = {
  "grpc.service_config": JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }),
  "grpc.initial_reconnect_backoff_ms": 200,
  "grpc.max_reconnect_backoff_ms": 2_000,
  "grpc.dns_min_time_between_resolutions_ms": 5_000,
};

export interface GenerateOptions {
  /** Aborting cancels the gRPC call; llm-service aborts the provider request at once. */
  signal?: AbortSignal;
  /** Absolute deadline (Date or epoch ms). */
  deadline?: Date | number;
}

export type HealthStatus = "UNKNOWN" | "SERVING" | "NOT_SERVING" | "SERVICE_UNKNOWN";

export interface LlmClient {
  /**
   * Streams the answer to one conversation. Provider failures are `error` chunks (with
   * `retryable`); failures of the call itself throw an LlmClientError subclass.
   */
  generate(input: GenerateInput, options?: GenerateOptions): AsyncIterable<LlmChunk>;
  /**
   * Embeds 1..100 texts with the configured provider's embedding API (one vector per text, in
   * order). Failures throw an LlmClientError subclass, mapped from the gRPC status as for
   * `generate`: UNAVAILABLE (transient, retry later) → LlmUnavailableError, INVALID_ARGUMENT →
   * LlmInvalidArgumentError, FAILED_PRECONDITION (key, configuration, vector size) →
   * LlmRpcError with `grpcCode` 9.
   */
  embed(input: EmbedInput, options?: EmbedOptions): Promise<EmbedOutput>;
  /** grpc.health.v1 Check for the LLM service. */
  health(options?: { deadline?: Date | number }): Promise<HealthStatus>;
  close(): void;
}

type GrpcCtor = new (
  address: string,
  creds: grpc.ChannelCredentials,
  options?: grpc.ChannelOptions,
) => grpc.Client;

function loadCtor(file: string, path: string[]): GrpcCtor {
  let node: unknown = grpc.loadPackageDefinition(
    protoLoader.loadSync(`${PROTO_DIR}/${file}`, LOADER_OPTIONS),
  );
  for (const part of path) node = (node as Record<string, unknown>)[part];
  return node as GrpcCtor;
}

/** A message on the wire; its continuity data goes back on the fields it came from. */
function messageToWire(m: ConversationMessage): Record<string, unknown> {
  const signatures = m.continuity?.toolCallSignatures ?? {};
  return {
    role: m.role,
    content: m.content,
    tool_calls: (m.toolCalls ?? []).map((call) => ({
      ...call,
      thought_signature: signatures[call.id] ?? "",
    })),
    tool_call_id: m.toolCallId ?? "",
    tool_name: m.toolName ?? "",
    reasoning: (m.continuity?.blocks ?? []).map((block) => ({
      thinking: block.thinking,
      signature: block.signature ?? "",
      redacted_data: block.redactedData ?? "",
    })),
    thought_signature: m.continuity?.textSignature ?? "",
  };
}

function toWire(input: GenerateInput): Record<string, unknown> {
  const parsed = GenerateInputSchema.safeParse(input);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    throw new LlmInvalidArgumentError(`invalid GenerateInput: ${issues.join("; ")}`);
  }
  const req = parsed.data;
  const c = req.config;
  return {
    session_id: req.sessionId,
    execution_id: req.executionId,
    agent_name: req.agentName,
    prompt_cache: req.promptCache,
    messages: req.messages.map(messageToWire),
    tools: req.tools.map((t) => ({
      name: t.name,
      description: t.description,
      parameters_schema:
        t.parameters === undefined
          ? ""
          : typeof t.parameters === "string"
            ? t.parameters
            : JSON.stringify(t.parameters),
    })),
    llm_config: {
      provider: c.provider,
      model: c.model,
      api_key_env: c.apiKeyEnv ?? "",
      base_url: c.baseUrl ?? "",
      backend: c.backend,
      temperature: c.temperature,
      max_tokens: c.maxTokens,
      thinking_budget: c.thinkingBudget,
      thinking_level: c.thinkingLevel ?? "",
      reasoning_effort: c.reasoningEffort ?? "",
      native_tools: {
        google_search: c.nativeTools?.googleSearch ?? false,
        code_execution: c.nativeTools?.codeExecution ?? false,
        url_context: c.nativeTools?.urlContext ?? false,
      },
      script: c.script ?? "",
      vertex_project: c.vertexProject ?? "",
      vertex_location: c.vertexLocation ?? "",
      credentials_env: c.credentialsEnv ?? "",
      project_env: c.projectEnv ?? "",
      location_env: c.locationEnv ?? "",
    },
  };
}

function fromWire(raw: unknown): { chunk?: LlmChunk; final: boolean } {
  const parsed = GenerateResponseWireSchema.safeParse(raw);
  if (!parsed.success)
    throw new LlmInvalidResponseError(`invalid GenerateResponse: ${parsed.error.message}`);
  const m = parsed.data;
  const final = m.is_final;
  switch (m.content) {
    case "text":
      return m.text
        ? {
            chunk: {
              type: "text",
              content: m.text.content,
              ...(m.text.thought_signature && { thoughtSignature: m.text.thought_signature }),
            },
            final,
          }
        : { final };
    case "thinking":
      return m.thinking
        ? { chunk: { type: "thinking", content: m.thinking.content }, final }
        : { final };
    case "tool_call":
      return m.tool_call
        ? {
            chunk: {
              type: "tool_call",
              callId: m.tool_call.call_id,
              name: m.tool_call.name,
              arguments: m.tool_call.arguments,
              ...(m.tool_call.thought_signature && {
                thoughtSignature: m.tool_call.thought_signature,
              }),
            },
            final,
          }
        : { final };
    case "reasoning":
      return m.reasoning
        ? {
            chunk: {
              type: "reasoning",
              thinking: m.reasoning.thinking,
              ...(m.reasoning.signature && { signature: m.reasoning.signature }),
              ...(m.reasoning.redacted_data && { redactedData: m.reasoning.redacted_data }),
            },
            final,
          }
        : { final };
    case "code_execution":
      return m.code_execution
        ? { chunk: { type: "code_execution", ...m.code_execution }, final }
        : { final };
    case "grounding":
      return m.grounding
        ? {
            chunk: {
              type: "grounding",
              webSearchQueries: m.grounding.web_search_queries,
              sources: m.grounding.sources,
              urlContextUrls: m.grounding.url_context_urls,
            },
            final,
          }
        : { final };
    case "usage":
      return m.usage
        ? {
            chunk: {
              type: "usage",
              inputTokens: m.usage.input_tokens,
              outputTokens: m.usage.output_tokens,
              totalTokens: m.usage.total_tokens,
              thinkingTokens: m.usage.thinking_tokens,
              cacheReadTokens: m.usage.cache_read_tokens,
              cacheCreationTokens: m.usage.cache_creation_tokens,
            },
            final,
          }
        : { final };
    case "error":
      return m.error
        ? {
            chunk: {
              type: "error",
              message: m.error.message,
              code: m.error.code,
              retryable: m.error.retryable,
              partialOutput: m.error.partial_output,
              retriesExhausted: m.error.retries_exhausted,
            },
            final,
          }
        : { final };
    default:
      return { final };
  }
}

class GrpcLlmClient implements LlmClient {
  readonly #llm: grpc.Client;
  readonly #health: grpc.Client;

  constructor(options: LlmClientOptions) {
    const creds = grpc.credentials.createInsecure();
    const LlmService = loadCtor("llm_service.proto", ["llm", "v1", "LLMService"]);
    const Health = loadCtor("health.proto", ["grpc", "health", "v1", "Health"]);
    const channelOptions = { ...DEFAULT_CHANNEL_OPTIONS, ...options.channelOptions };
    this.#llm = new LlmService(options.address, creds, channelOptions);
    // Same address, shared subchannel pool: one HTTP/2 connection per replica serves both.
    this.#health = new Health(options.address, creds, channelOptions);
  }

  async *generate(input: GenerateInput, options: GenerateOptions = {}): AsyncGenerator<LlmChunk> {
    const request = toWire(input);
    const { signal } = options;
    if (signal?.aborted) throw new LlmCancelledError("llm call cancelled before it started");
    const callOptions: grpc.CallOptions =
      options.deadline !== undefined ? { deadline: options.deadline } : {};
    const method = (
      this.#llm as unknown as Record<
        string,
        (...args: unknown[]) => grpc.ClientReadableStream<unknown>
      >
    ).Generate;
    if (!method) throw new LlmInvalidResponseError("proto has no Generate method");
    const call = method.call(this.#llm, request, new grpc.Metadata(), callOptions);
    const onAbort = () => call.cancel();
    signal?.addEventListener("abort", onAbort, { once: true });
    let finished = false;
    try {
      for await (const raw of call) {
        const { chunk, final } = fromWire(raw);
        if (chunk) yield chunk;
        if (final) {
          finished = true;
          break;
        }
      }
      if (!finished)
        throw new LlmStreamIncompleteError("llm-service ended the stream without a final chunk");
    } catch (err) {
      if (err instanceof LlmInvalidResponseError || err instanceof LlmStreamIncompleteError)
        throw err;
      if (signal?.aborted)
        throw new LlmCancelledError("llm call cancelled by the caller", undefined, { cause: err });
      throw fromGrpcError(err);
    } finally {
      signal?.removeEventListener("abort", onAbort);
      // Stops the call if the consumer left the loop early (break / throw in the loop body).
      if (!finished) call.cancel();
    }
  }

  embed(input: EmbedInput, options: EmbedOptions = {}): Promise<EmbedOutput> {
    let request: Record<string, unknown>;
    try {
      request = embedToWire(input);
    } catch (err) {
      return Promise.reject(err);
    }
    const { signal } = options;
    if (signal?.aborted)
      return Promise.reject(new LlmCancelledError("embed call cancelled before it started"));
    const callOptions: grpc.CallOptions =
      options.deadlineMs !== undefined ? { deadline: Date.now() + options.deadlineMs } : {};
    const method = (this.#llm as unknown as Record<string, (...args: unknown[]) => grpc.Call>)
      .Embed;
    if (!method) return Promise.reject(new LlmInvalidResponseError("proto has no Embed method"));
    const texts = input.texts.length;
    return new Promise<EmbedOutput>((resolve, reject) => {
      const onAbort = () => call.cancel();
      const call = method.call(
        this.#llm,
        request,
        new grpc.Metadata(),
        callOptions,
        (err: grpc.ServiceError | null, response: unknown) => {
          signal?.removeEventListener("abort", onAbort);
          if (err) {
            reject(
              signal?.aborted
                ? new LlmCancelledError("embed call cancelled by the caller", err.code)
                : fromGrpcError(err),
            );
            return;
          }
          try {
            resolve(embedFromWire(response, texts));
          } catch (parseErr) {
            reject(parseErr);
          }
        },
      );
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  health(options: { deadline?: Date | number } = {}): Promise<HealthStatus> {
    const deadline = options.deadline ?? Date.now() + 5000;
    const check = (this.#health as unknown as Record<string, (...args: unknown[]) => void>).Check;
    return new Promise((resolve, reject) => {
      if (!check) return reject(new LlmInvalidResponseError("proto has no Check method"));
      check.call(
        this.#health,
        { service: "llm.v1.LLMService" },
        new grpc.Metadata(),
        { deadline },
        (err: grpc.ServiceError | null, res: { status: HealthStatus }) =>
          err ? reject(fromGrpcError(err)) : resolve(res.status),
      );
    });
  }

  close(): void {
    this.#llm.close();
    this.#health.close();
  }
}

export function createLlmClient(options: LlmClientOptions): LlmClient {
  return new GrpcLlmClient(options);
}
