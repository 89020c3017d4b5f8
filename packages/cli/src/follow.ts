import {
  type Channel,
  HttpErrorBodySchema,
  type WsChunkFrame,
  type WsClientAction,
  type WsEventFrame,
  WsServerFrameSchema,
} from "@tarsy/contracts";
import WebSocket from "ws";
import type { CliIo } from "./command.ts";
import { BadResponseError, UnreachableError, WebSocketRefusedError } from "./errors.ts";

/** What a frame handler decides: keep following, or stop with an exit code. */
export type FollowDecision = undefined | { exit: number };

export interface FollowOptions {
  wsUrl: string;
  channel: Channel;
  io: CliIo;
  user?: string;
  /** API token sent as `Authorization: Bearer` on the WebSocket's upgrade request. */
  token?: string;
  /** `Cookie` header value (oauth2-proxy's session) sent on the upgrade request. */
  cookie?: string;
  /** Called once, after the first subscription is confirmed (earlier events replayed). */
  onConfirmed?(): Promise<FollowDecision> | FollowDecision;
  onEvent(frame: WsEventFrame): FollowDecision;
  onChunk(frame: WsChunkFrame): FollowDecision;
  /** Reconnect attempts after a lost connection before giving up (default 20). */
  maxReconnects?: number;
}

const BACKOFF_MS = [250, 500, 1_000, 2_000, 4_000];

/**
 * Follows one channel of stream-relay until a handler returns an exit code. The first
 * `subscribe` replays the channel's stored events; after a lost connection it reconnects
 * and sends `catchup` with the last event id, so nothing is missed or repeated.
 */
export async function followChannel(options: FollowOptions): Promise<number> {
  const maxReconnects = options.maxReconnects ?? 20;
  let lastEventId = 0;
  let confirmedOnce = false;
  let failures = 0;
  for (;;) {
    const outcome = await session(options, lastEventId, confirmedOnce, {
      onId: (id) => {
        lastEventId = id;
      },
      onConfirmed: () => {
        confirmedOnce = true;
        failures = 0;
      },
    });
    if (outcome.kind === "exit") return outcome.code;
    if (!confirmedOnce && lastEventId === 0 && failures === 0 && outcome.kind === "unreachable") {
      throw new UnreachableError("the TARSy WebSocket", options.wsUrl, outcome.error);
    }
    failures++;
    if (failures > maxReconnects) {
      throw new UnreachableError("the TARSy WebSocket", options.wsUrl, outcome.error);
    }
    const delay = BACKOFF_MS[Math.min(failures - 1, BACKOFF_MS.length - 1)] ?? 4_000;
    options.io.err(
      `tarsy: connection lost (${outcome.error.message}); reconnecting in ${delay} ms (last event ${lastEventId})\n`,
    );
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

type Outcome =
  | { kind: "exit"; code: number }
  | { kind: "unreachable"; error: Error }
  | { kind: "lost"; error: Error };

interface Tracker {
  onId(id: number): void;
  onConfirmed(): void;
}

function session(
  options: FollowOptions,
  lastEventId: number,
  confirmedBefore: boolean,
  tracker: Tracker,
): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    if (options.user) headers["x-forwarded-user"] = options.user;
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.cookie) headers.cookie = options.cookie;
    const socket = new WebSocket(options.wsUrl, { headers, handshakeTimeout: 10_000 });
    let opened = false;
    let settled = false;
    let seen = lastEventId;
    let pending = Promise.resolve();
    const settle = (outcome: Outcome | Error) => {
      if (settled) return;
      settled = true;
      socket.removeAllListeners("message");
      socket.terminate();
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const send = (action: WsClientAction) => socket.send(JSON.stringify(action));

    socket.on("open", () => {
      opened = true;
      if (lastEventId > 0) {
        send({ action: "catchup", channel: options.channel, last_event_id: lastEventId });
      } else {
        send({ action: "subscribe", channel: options.channel });
      }
    });
    socket.on("message", (data) => {
      // Frames are handled strictly in order, even when a handler is asynchronous.
      pending = pending.then(() => handle(String(data))).catch((error) => settle(error));
    });
    // An HTTP answer instead of the upgrade: a 4xx (no or a bad token, a foreign origin) is
    // final and said as the relay says it; anything else is retried like a lost connection.
    socket.on("unexpected-response", (_req, res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (text: string) => {
        body += text;
      });
      res.on("error", () => undefined);
      res.on("end", () => {
        const status = res.statusCode ?? 0;
        const parsed = HttpErrorBodySchema.safeParse(parseJson(body));
        const refused = new WebSocketRefusedError(
          options.wsUrl,
          status,
          parsed.success ? parsed.data.error : undefined,
        );
        settle(status >= 400 && status < 500 ? refused : { kind: "unreachable", error: refused });
      });
    });
    socket.on("error", (error) => {
      settle(opened ? { kind: "lost", error } : { kind: "unreachable", error });
    });
    socket.on("close", (code, reason) => {
      const text = reason.toString() || "closed by the server";
      settle({ kind: "lost", error: new Error(`${text} (code ${code})`) });
    });

    async function handle(raw: string): Promise<void> {
      if (settled) return;
      let json: unknown;
      try {
        json = JSON.parse(raw);
      } catch {
        throw new BadResponseError("the WebSocket sent a frame that is not JSON");
      }
      const parsed = WsServerFrameSchema.safeParse(json);
      if (!parsed.success) return; // a frame of a newer protocol: ignore it
      const frame = parsed.data;
      let decision: FollowDecision;
      if ("id" in frame) {
        if (frame.id <= seen) return;
        seen = frame.id;
        tracker.onId(frame.id);
        decision = options.onEvent(frame);
      } else if (frame.type === "stream.chunk") {
        decision = options.onChunk(frame);
      } else if (frame.type === "subscription.confirmed") {
        tracker.onConfirmed();
        if (!confirmedBefore) {
          confirmedBefore = true;
          decision = await options.onConfirmed?.();
        }
      } else if (frame.type === "subscription.error") {
        throw new BadResponseError(`subscription to ${frame.channel} refused: ${frame.message}`);
      } else if (frame.type === "catchup.overflow") {
        options.io.err(
          `tarsy: more than ${frame.limit} earlier events; showing only new ones (see "tarsy session show")\n`,
        );
      } else if (frame.type === "error") {
        options.io.err(`tarsy: server error ${frame.code}: ${frame.message}\n`);
      }
      if (decision) settle({ kind: "exit", code: decision.exit });
    }
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
