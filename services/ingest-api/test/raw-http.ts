import { connect } from "node:net";

/** One HTTP/1.1 response as read off the socket. */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface ExchangeOptions {
  /**
   * Half-close after writing (default false). Node answers a half-closed connection by
   * closing it, so only a request that sends less body than it announced needs it.
   */
  halfClose?: boolean;
  timeoutMs?: number;
}

/**
 * Sends raw bytes to a server and parses the response(s) it writes until it closes the
 * connection (send `Connection: close`): what a client sees when Node's parser, not the
 * app, answers.
 */
export function rawExchange(
  port: number,
  data: string | Uint8Array,
  options: ExchangeOptions = {},
): Promise<RawResponse[]> {
  const timeoutMs = options.timeoutMs ?? 5_000;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const bytes = typeof data === "string" ? Buffer.from(data, "latin1") : data;
    const socket = connect(port, "127.0.0.1", () => {
      if (options.halfClose) socket.end(bytes);
      else socket.write(bytes);
    });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer in ${timeoutMs} ms: ${Buffer.concat(chunks)}`));
    }, timeoutMs);
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on("close", () => {
      clearTimeout(timer);
      try {
        resolve(parseResponses(Buffer.concat(chunks)));
      } catch (err) {
        reject(err);
      }
    });
  });
}

/** Splits a byte stream into responses (Content-Length or chunked bodies). */
export function parseResponses(bytes: Buffer): RawResponse[] {
  const out: RawResponse[] = [];
  let rest = bytes;
  while (rest.length > 0) {
    const end = rest.indexOf("\r\n\r\n");
    if (end < 0) throw new Error(`incomplete response head: ${rest.toString("latin1")}`);
    const [statusLine = "", ...lines] = rest.subarray(0, end).toString("latin1").split("\r\n");
    const match = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
    if (!match) throw new Error(`not an HTTP response: ${statusLine}`);
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(":");
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    let body = rest.subarray(end + 4);
    if (headers["transfer-encoding"]?.toLowerCase() === "chunked") {
      const parts: Buffer[] = [];
      for (;;) {
        const lineEnd = body.indexOf("\r\n");
        const size = Number.parseInt(body.subarray(0, lineEnd).toString("latin1"), 16);
        body = body.subarray(lineEnd + 2);
        if (!size) {
          body = body.subarray(2);
          break;
        }
        parts.push(body.subarray(0, size));
        body = body.subarray(size + 2);
      }
      rest = body;
      body = Buffer.concat(parts);
    } else {
      const length = Number(headers["content-length"] ?? body.length);
      rest = body.subarray(length);
      body = body.subarray(0, length);
    }
    out.push({ status: Number(match[1]), headers, body: body.toString("utf8") });
  }
  return out;
}

/** Whether a response is an error in the API's one shape, with a JSON content type. */
export function hasErrorShape(res: { headers: Record<string, string>; body: string }): boolean {
  if (!/^application\/json\b/i.test(res.headers["content-type"] ?? "")) return false;
  try {
    const parsed = JSON.parse(res.body) as { error?: { code?: unknown; message?: unknown } };
    return typeof parsed.error?.code === "string" && typeof parsed.error.message === "string";
  } catch {
    return false;
  }
}
