import { createServer, type Server, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { getRequestListener, RequestError } from "@hono/node-server";
import type { HttpErrorBody, HttpErrorCode } from "@tarsy/contracts";
import type { Logger } from "@tarsy/runtime";

/**
 * The Node HTTP server around the Hono app. Requests Node's parser or the adapter reject
 * before the app runs (oversized headers, malformed request lines, a backslash in the path)
 * still get the one error shape `{ error: { code, message } }` as JSON.
 */

export interface HttpServerOptions {
  fetch: (request: Request) => Response | Promise<Response>;
  logger: Logger;
  /** Request line plus headers, in bytes (Node's `maxHeaderSize`); more is a 431. */
  maxHeaderBytes: number;
}

const errorJson = (code: HttpErrorCode, message: string): string => {
  const body: HttpErrorBody = { error: { code, message } };
  return JSON.stringify(body);
};

function errorResponse(status: number, code: HttpErrorCode, message: string): Response {
  return new Response(errorJson(code, message), {
    status,
    headers: { "content-type": "application/json; charset=UTF-8" },
  });
}

/** What to answer for an error of Node's HTTP parser (`clientError`). */
export function describeClientError(err: NodeJS.ErrnoException): {
  status: number;
  code: HttpErrorCode;
  message: string;
} {
  switch (err.code) {
    case "HPE_HEADER_OVERFLOW":
      return {
        status: 431,
        code: "headers_too_large",
        message: "the request line and headers are too large",
      };
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return {
        status: 408,
        code: "request_timeout",
        message: "the request took too long to arrive",
      };
    default:
      return {
        status: 400,
        code: "bad_request",
        message: `malformed HTTP request${err.code ? ` (${err.code})` : ""}`,
      };
  }
}

type InFlight = {
  writableFinished: boolean;
  req?: { complete: boolean };
  once(event: "finish" | "close", f: () => void): void;
};

/**
 * Writes an error response on a socket whose request never reached the app. When the
 * malformed bytes followed a good request on the same connection (pipelining, or a body
 * longer than its Content-Length), that request's answer goes out first, so a client never
 * reads a 4xx for a request that was carried out.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex, log: Logger): void {
  if (err.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return;
  }
  const inFlight = (socket as { _httpMessage?: InFlight | null })._httpMessage;
  // Only a request whose body fully arrived is answered first; one still waiting for its
  // body (a Content-Length larger than what was sent) would wait forever.
  if (inFlight && !inFlight.writableFinished && inFlight.req?.complete) {
    let answered = false;
    const answerOnce = () => {
      if (answered) return;
      answered = true;
      answerClientError(err, socket, log);
    };
    inFlight.once("finish", answerOnce);
    inFlight.once("close", answerOnce);
    return;
  }
  const { status, code, message } = describeClientError(err);
  log.debug({ code: err.code, status }, "rejected a malformed HTTP request");
  const body = errorJson(code, message);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? "Error"}\r\n` +
      "Content-Type: application/json; charset=UTF-8\r\n" +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      "Connection: close\r\n\r\n" +
      body,
  );
}

/** A not yet listening server for `fetch`; call `listen` on it. */
export function createHttpServer(options: HttpServerOptions): Server {
  const log = options.logger.child({ component: "http-server" });
  const listener = getRequestListener(options.fetch, {
    errorHandler: (err) => {
      if (err instanceof RequestError) return errorResponse(400, "bad_request", err.message);
      log.error({ err }, "request failed outside the app");
      return errorResponse(500, "internal", "internal server error");
    },
  });
  const server = createServer(
    // A request without Host reaches the adapter, which answers it in the error shape.
    { maxHeaderSize: options.maxHeaderBytes, requireHostHeader: false },
    listener,
  );
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex) =>
    answerClientError(err, socket, log),
  );
  return server;
}
