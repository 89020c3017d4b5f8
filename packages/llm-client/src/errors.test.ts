import { status } from "@grpc/grpc-js";
import { describe, expect, it } from "vitest";
import {
  fromGrpcError,
  LlmCancelledError,
  LlmDeadlineExceededError,
  LlmInvalidArgumentError,
  LlmRpcError,
  LlmUnavailableError,
} from "./errors.ts";
import { GenerateInputSchema } from "./types.ts";

describe("gRPC status → typed errors", () => {
  it.each([
    [status.UNAVAILABLE, LlmUnavailableError, "llm_unavailable"],
    [status.DEADLINE_EXCEEDED, LlmDeadlineExceededError, "llm_deadline_exceeded"],
    [status.CANCELLED, LlmCancelledError, "llm_cancelled"],
    [status.INVALID_ARGUMENT, LlmInvalidArgumentError, "llm_invalid_argument"],
    [status.INTERNAL, LlmRpcError, "llm_rpc_failed"],
  ])("status %i", (code, cls, name) => {
    const err = fromGrpcError({ code, details: "why" });
    expect(err).toBeInstanceOf(cls);
    expect(err.code).toBe(name);
    expect(err.grpcCode).toBe(code);
    expect(err.message).toContain("why");
  });
});

describe("error messages", () => {
  it("name the cause once, also when a log serializer appends every cause", () => {
    // What grpc-js throws when nothing listens on the address.
    const grpcError = Object.assign(
      new Error("14 UNAVAILABLE: No connection established. Last error: connect ECONNREFUSED"),
      {
        code: status.UNAVAILABLE,
        details: "No connection established. Last error: connect ECONNREFUSED",
      },
    );
    const err = fromGrpcError(grpcError);
    expect(err.message).toBe(
      "llm-service unavailable: No connection established. Last error: connect ECONNREFUSED",
    );
    expect(err.details).toBe(grpcError.details);
    // pino's err serializer writes `message: cause.message: cause.cause.message …`.
    const chain: string[] = [];
    for (let e: unknown = err; e instanceof Error; e = e.cause) chain.push(e.message);
    expect(chain.join(": ").split("ECONNREFUSED")).toHaveLength(2);
  });
});

describe("GenerateInput validation", () => {
  it("rejects an empty conversation and an unknown role before any call", () => {
    const config = { provider: "scripted" };
    expect(GenerateInputSchema.safeParse({ messages: [], config }).success).toBe(false);
    expect(
      GenerateInputSchema.safeParse({ messages: [{ role: "bot", content: "x" }], config }).success,
    ).toBe(false);
    const ok = GenerateInputSchema.parse({ messages: [{ role: "user", content: "x" }], config });
    expect(ok.config.backend).toBe("langchain");
  });
});
