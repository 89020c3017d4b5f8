import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { InitFailedError, OperationTimeoutError, SessionClosedError } from "./errors.ts";
import { classifyError, type RecoveryAction, retryBackoffMs } from "./recovery.ts";

const sysError = (code: string, message = code) => Object.assign(new Error(message), { code });
class StreamableHTTPError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

describe("classifyError", () => {
  const table: Array<[string, unknown, RecoveryAction]> = [
    ["nothing", undefined, "no_retry"],
    ["abort", Object.assign(new Error("aborted"), { name: "AbortError" }), "no_retry"],
    ["our deadline", new OperationTimeoutError("tools/call", 10), "no_retry"],
    [
      "MCP request timeout",
      new McpError(ErrorCode.RequestTimeout, "Request timed out"),
      "no_retry",
    ],
    [
      "MCP connection closed",
      new McpError(ErrorCode.ConnectionClosed, "Connection closed"),
      "retry_new_session",
    ],
    ["MCP invalid params", new McpError(ErrorCode.InvalidParams, "bad"), "no_retry"],
    ["MCP method not found", new McpError(ErrorCode.MethodNotFound, "nope"), "no_retry"],
    ["MCP parse error", new McpError(ErrorCode.ParseError, "garbled"), "no_retry"],
    ["MCP internal error", new McpError(ErrorCode.InternalError, "boom"), "no_retry"],
    ["connection refused", sysError("ECONNREFUSED"), "retry_new_session"],
    ["connection reset", sysError("ECONNRESET"), "retry_new_session"],
    ["broken pipe", sysError("EPIPE"), "retry_new_session"],
    ["network timeout", sysError("ETIMEDOUT"), "no_retry"],
    [
      "fetch failed (refused)",
      new TypeError("fetch failed", { cause: sysError("ECONNREFUSED") }),
      "retry_new_session",
    ],
    [
      "fetch failed (connect timeout)",
      new TypeError("fetch failed", { cause: sysError("UND_ERR_CONNECT_TIMEOUT") }),
      "no_retry",
    ],
    [
      "HTTP session expired",
      new StreamableHTTPError(404, "Session not found"),
      "retry_new_session",
    ],
    ["HTTP 400", new StreamableHTTPError(400, "bad request body"), "no_retry"],
    ["closed session", new SessionClosedError("gone"), "retry_new_session"],
    [
      "init refused",
      new InitFailedError("s", { cause: sysError("ECONNREFUSED") }),
      "retry_new_session",
    ],
    [
      "init timeout",
      new InitFailedError("s", { cause: new OperationTimeoutError("init", 5) }),
      "no_retry",
    ],
    ["unknown error", new Error("something odd"), "no_retry"],
    ["a string", "weird", "no_retry"],
  ];
  for (const [name, err, expected] of table) {
    it(`${name} → ${expected}`, () => expect(classifyError(err)).toBe(expected));
  }
});

describe("retryBackoffMs", () => {
  it("stays within 250–750 ms and is jittered", () => {
    expect(retryBackoffMs(() => 0)).toBe(250);
    expect(retryBackoffMs(() => 0.999999)).toBeLessThan(750);
    const samples = new Set(Array.from({ length: 50 }, () => retryBackoffMs()));
    for (const s of samples) {
      expect(s).toBeGreaterThanOrEqual(250);
      expect(s).toBeLessThan(750);
    }
    expect(samples.size).toBeGreaterThan(5);
  });
});
