import type { WsServerFrame } from "@tarsy/contracts";
import WebSocket from "ws";

/**
 * A real WebSocket client of the relay's protocol for tests: records every frame and waits
 * for the ones a test expects.
 */
export interface TestClient {
  ws: WebSocket;
  frames: WsServerFrame[];
  send(action: unknown): void;
  sendRaw(text: string): void;
  /** Resolves with the first frame (from index `from`) matching, or rejects after `timeoutMs`. */
  waitFor(
    predicate: (f: WsServerFrame) => boolean,
    timeoutMs?: number,
    from?: number,
  ): Promise<WsServerFrame>;
  /** Event ids received, in order. */
  eventIds(): number[];
  closed: Promise<{ code: number; reason: string }>;
  close(): Promise<void>;
}

export async function connectClient(
  url: string,
  headers: Record<string, string> = {},
): Promise<TestClient> {
  const ws = new WebSocket(url, { headers });
  const frames: WsServerFrame[] = [];
  const waiters = new Set<() => void>();
  ws.on("message", (data) => {
    frames.push(JSON.parse(data.toString()) as WsServerFrame);
    for (const w of waiters) w();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on("close", (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  const client: TestClient = {
    ws,
    frames,
    closed,
    send: (action) => ws.send(JSON.stringify(action)),
    sendRaw: (text) => ws.send(text),
    waitFor(predicate, timeoutMs = 5_000, from = 0) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = frames.slice(from).find(predicate);
          if (found) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(found);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(`no matching frame within ${timeoutMs} ms; got ${frames.length} frames`),
          );
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    eventIds: () => frames.flatMap((f) => ("id" in f ? [f.id] : [])),
    async close() {
      if (ws.readyState === WebSocket.CLOSED) return;
      ws.close();
      await closed;
    },
  };
  await client.waitFor((f) => f.type === "connection.established");
  return client;
}

/** Waits until the client holds `count` event frames. */
export async function waitForEvents(client: TestClient, count: number, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (client.eventIds().length < count) {
    if (Date.now() > deadline) {
      throw new Error(`expected ${count} events, got ${client.eventIds().length}`);
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}
