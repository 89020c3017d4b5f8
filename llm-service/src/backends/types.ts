import type { Logger } from "@tarsy/runtime";
import type { Chunk, GenerateRequest } from "../request.ts";

/** Looks up an environment variable by name (only the one a config names). */
export type SecretLookup = (name: string) => string | undefined;

export interface BackendContext {
  /** Aborted when the gRPC caller cancels or its deadline passes. */
  signal: AbortSignal;
  logger: Logger;
}

/**
 * One implementation of the `backend` config value. `generate` yields chunks and throws
 * (LlmServiceError or any SDK error) on failure; the server retries and reports errors.
 */
export interface Backend {
  readonly name: string;
  /** false for backends whose errors are scripted outcomes, not transient failures. */
  readonly retriesTransientErrors: boolean;
  generate(request: GenerateRequest, ctx: BackendContext): AsyncIterable<Chunk>;
}
