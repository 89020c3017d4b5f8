import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

/** A request as the fake provider saw it. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: unknown;
  /** When the request arrived (ms since the epoch): retry waits are measured between these. */
  receivedAt: number;
}

/** How the fake answers one request. */
export type Responder = (res: ServerResponse, req: RecordedRequest) => Promise<void>;

export interface FakeProvider {
  url: string;
  requests: RecordedRequest[];
  /** Answers the next requests in order; when none are queued, the fallback answers. */
  enqueue(...responders: Responder[]): void;
  /** Resolves when a response is closed by the client before the fake finished it. */
  clientClosed(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A loopback HTTP server standing in for a provider. It speaks whatever wire format the
 * queued responders write; it records every request and notices clients hanging up.
 */
export async function startFakeProvider(fallback?: Responder): Promise<FakeProvider> {
  const queue: Responder[] = [];
  const requests: RecordedRequest[] = [];
  const closedWaiters: (() => void)[] = [];
  let closedEarly = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    const receivedAt = Date.now();
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const recorded: RecordedRequest = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: text ? (JSON.parse(text) as unknown) : undefined,
        receivedAt,
      };
      requests.push(recorded);
      res.on("close", () => {
        if (!res.writableFinished) {
          closedEarly++;
          for (const waiter of closedWaiters.splice(0)) waiter();
        }
      });
      const responder = queue.shift() ?? fallback;
      if (!responder) {
        res.writeHead(500).end("no responder queued");
        return;
      }
      responder(res, recorded).catch(() => res.destroy());
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    enqueue: (...responders) => queue.push(...responders),
    clientClosed: () =>
      closedEarly > 0
        ? Promise.resolve()
        : new Promise<void>((resolve) => closedWaiters.push(resolve)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The connection drops before any response (a reset, as a flaky network does it). */
export const dropConnection: Responder = async (res) => {
  res.socket?.destroy();
};

/** An error response with a JSON body, as providers send them. */
export function respondJson(
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): Responder {
  return async (res) => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify(body));
  };
}

export interface SseEvent {
  event?: string;
  data: unknown;
}

/**
 * Streams server-sent events. With `hang`, the stream stays open after the events (a slow
 * model) until the client goes away.
 */
export function respondSse(
  events: (SseEvent | string)[],
  options: { delayMs?: number; hang?: boolean } = {},
): Responder {
  return async (res) => {
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      connection: "keep-alive",
    });
    for (const item of events) {
      if (res.destroyed) return;
      const event = typeof item === "string" ? { data: item } : item;
      const data = typeof event.data === "string" ? event.data : JSON.stringify(event.data);
      res.write(`${event.event ? `event: ${event.event}\n` : ""}data: ${data}\n\n`);
      if (options.delayMs) await sleep(options.delayMs);
    }
    if (options.hang) {
      while (!res.destroyed) await sleep(20);
      return;
    }
    res.end();
  };
}
