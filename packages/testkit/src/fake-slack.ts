import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A loopback stand-in for Slack's Web API, speaking its wire format (form-encoded or JSON
 * requests, `{ ok, ... }` answers): `conversations.history` (paged, with `oldest`, `cursor`
 * and `include_all_metadata`), `conversations.replies` and `chat.postMessage` (threads,
 * blocks, metadata). Messages are kept per channel; tests seed them, read what was posted,
 * take the API down, or hold a post's answer (the message is stored first, as Slack would).
 */
export interface FakeSlackMessage {
  ts: string;
  text: string;
  thread_ts?: string;
  blocks?: unknown[];
  attachments?: { text?: string; fallback?: string }[];
  metadata?: { event_type: string; event_payload: Record<string, unknown> };
}

export interface FakeSlackPost extends FakeSlackMessage {
  channel: string;
}

export interface FakeSlack {
  /** Base URL for `system.slack.api_url`, ending in `/`. */
  readonly url: string;
  readonly token: string;
  /** Every message ever posted with chat.postMessage, in order. */
  readonly posts: FakeSlackPost[];
  /** Every API call: method name and, for history/replies, its parameters. */
  readonly calls: { method: string; params: Record<string, string> }[];
  /** Adds a message to a channel's history (e.g. the alert a fingerprint points at). */
  seed(channel: string, message: Omit<FakeSlackMessage, "ts"> & { ts?: string }): FakeSlackMessage;
  /** While set, every call answers this HTTP status (e.g. 503) and stores nothing. */
  down: number | null;
  /** While set, a post is stored and then its answer held until `releaseHeld()`. */
  holdPosts: boolean;
  /** Resolves when the next post arrives (stored). */
  nextPost(): Promise<FakeSlackPost>;
  releaseHeld(): void;
  close(): Promise<void>;
}

const HISTORY_METHODS = new Set(["conversations.history", "conversations.replies"]);

async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks).toString("utf8");
  if ((req.headers["content-type"] ?? "").includes("application/json")) {
    return raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(raw)) {
    out[key] = ["blocks", "metadata", "attachments"].includes(key) ? JSON.parse(value) : value;
  }
  return out;
}

export async function startFakeSlack(token = "xoxb-test-token"): Promise<FakeSlack> {
  const channels = new Map<string, FakeSlackMessage[]>();
  let clock = Math.floor(Date.now() / 1000);
  let counter = 0;
  const nextTs = () => `${clock}.${String(++counter).padStart(6, "0")}`;
  const postWaiters: ((post: FakeSlackPost) => void)[] = [];
  const held: (() => void)[] = [];
  const messagesOf = (channel: string) => {
    let list = channels.get(channel);
    if (!list) {
      list = [];
      channels.set(channel, list);
    }
    return list;
  };

  const answer = (res: ServerResponse, body: object) =>
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));

  const view = (m: FakeSlackMessage, withMetadata: boolean): FakeSlackMessage => {
    const { metadata, ...rest } = m;
    return withMetadata && metadata ? { ...rest, metadata } : rest;
  };

  const server = createServer((req, res) => {
    void (async () => {
      const method = new URL(req.url ?? "/", "http://x").pathname.replace(/^\/api\//, "");
      const body = await readBody(req);
      const params = Object.fromEntries(
        Object.entries(body).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]),
      );
      fake.calls.push({ method, params });
      if (fake.down !== null) {
        res.writeHead(fake.down, { "content-type": "text/plain" }).end("unavailable");
        return;
      }
      if (req.headers.authorization !== `Bearer ${token}` && body.token !== token) {
        answer(res, { ok: false, error: "invalid_auth" });
        return;
      }
      const channel = String(body.channel ?? "");
      if (HISTORY_METHODS.has(method)) {
        const oldest = Number(body.oldest ?? 0);
        const limit = Number(body.limit ?? 100);
        const offset = Number(body.cursor ?? 0);
        const withMetadata = String(body.include_all_metadata ?? "false") === "true";
        const all = messagesOf(channel).filter((m) => Number(m.ts) > oldest);
        const selected =
          method === "conversations.history"
            ? all.filter((m) => !m.thread_ts || m.thread_ts === m.ts).reverse()
            : all.filter((m) => m.ts === body.ts || m.thread_ts === body.ts);
        const page = selected.slice(offset, offset + limit);
        const more = offset + limit < selected.length;
        answer(res, {
          ok: true,
          messages: page.map((m) => view(m, withMetadata)),
          has_more: more,
          response_metadata: { next_cursor: more ? String(offset + limit) : "" },
        });
        return;
      }
      if (method === "chat.postMessage") {
        const message: FakeSlackMessage = {
          ts: nextTs(),
          text: String(body.text ?? ""),
          ...(body.thread_ts ? { thread_ts: String(body.thread_ts) } : {}),
          ...(body.blocks ? { blocks: body.blocks as unknown[] } : {}),
          ...(body.metadata ? { metadata: body.metadata as FakeSlackMessage["metadata"] } : {}),
        };
        messagesOf(channel).push(message);
        const post = { ...message, channel };
        fake.posts.push(post);
        for (const waiter of postWaiters.splice(0)) waiter(post);
        const reply = () => answer(res, { ok: true, channel, ts: message.ts, message });
        if (fake.holdPosts) held.push(reply);
        else reply();
        return;
      }
      answer(res, { ok: false, error: "unknown_method" });
    })().catch((err: unknown) => {
      res.writeHead(500).end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  const fake: FakeSlack = {
    url: `http://127.0.0.1:${port}/api/`,
    token,
    posts: [],
    calls: [],
    down: null,
    holdPosts: false,
    seed(channel, message) {
      clock = Math.max(clock, Math.floor(Date.now() / 1000));
      const stored = { ...message, ts: message.ts ?? nextTs() };
      messagesOf(channel).push(stored);
      return stored;
    },
    nextPost: () => new Promise((resolve) => postWaiters.push(resolve)),
    releaseHeld() {
      for (const reply of held.splice(0)) reply();
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return fake;
}
