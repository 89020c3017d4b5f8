import {
  type Channel,
  type WsChunkFrame,
  type WsClientAction,
  type WsEventFrame,
  WsServerFrameSchema,
} from "@tarsy/contracts";
import { ChannelCursors } from "./cursor.ts";

export type ConnectionStatus = "connecting" | "open" | "reconnecting" | "closed";

export interface ChannelHandlers {
  /** A persistent event, new on this channel (duplicates are already dropped). */
  onEvent?: (frame: WsEventFrame) => void;
  /** A transient LLM delta. */
  onChunk?: (frame: WsChunkFrame) => void;
  /** The relay could not replay everything that was missed: reload the state over REST. */
  onOverflow?: () => void;
  /** Joined (again): after a reconnect, what was missed has been replayed by now. */
  onConfirmed?: () => void;
}

/** The subset of the browser's WebSocket the connection uses. */
export interface SocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onclose: ((ev: unknown) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
}

export interface LiveConnectionOptions {
  url: string;
  createSocket?: (url: string) => SocketLike;
  minBackoffMs?: number;
  maxBackoffMs?: number;
  pingIntervalMs?: number;
}

export interface LiveConnection {
  readonly status: ConnectionStatus;
  onStatus(listener: (status: ConnectionStatus) => void): () => void;
  /** Joins a channel; the returned function leaves it. */
  subscribe(channel: Channel, handlers: ChannelHandlers): () => void;
  /**
   * Drops the socket as a network failure would; the connection reconnects after the usual
   * backoff, or after `pauseMs` when longer (a longer outage).
   */
  dropForTesting(pauseMs?: number): void;
  close(): void;
}

const OPEN = 1;

class ReconnectingLiveConnection implements LiveConnection {
  status: ConnectionStatus = "connecting";
  private socket: SocketLike | null = null;
  private readonly cursors = new ChannelCursors();
  private readonly channels = new Map<Channel, Set<ChannelHandlers>>();
  private readonly statusListeners = new Set<(status: ConnectionStatus) => void>();
  private attempt = 0;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private pingTimer: ReturnType<typeof setInterval> | null = null;
  private closed = false;
  private pauseMs = 0;

  constructor(private readonly options: Required<LiveConnectionOptions>) {
    this.connect();
  }

  onStatus(listener: (status: ConnectionStatus) => void): () => void {
    this.statusListeners.add(listener);
    listener(this.status);
    return () => this.statusListeners.delete(listener);
  }

  subscribe(channel: Channel, handlers: ChannelHandlers): () => void {
    let set = this.channels.get(channel);
    if (!set) {
      set = new Set();
      this.channels.set(channel, set);
      this.send(this.cursors.joinAction(channel));
    }
    set.add(handlers);
    return () => {
      const current = this.channels.get(channel);
      if (!current) return;
      current.delete(handlers);
      if (current.size === 0) {
        this.channels.delete(channel);
        this.cursors.forget(channel);
        this.send({ action: "unsubscribe", channel });
      }
    };
  }

  dropForTesting(pauseMs = 0): void {
    this.pauseMs = pauseMs;
    this.socket?.close(4000, "dropped for testing");
  }

  close(): void {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.pingTimer) clearInterval(this.pingTimer);
    this.socket?.close(1000, "closed");
    this.setStatus("closed");
  }

  private setStatus(status: ConnectionStatus): void {
    if (this.status === status) return;
    this.status = status;
    for (const listener of this.statusListeners) listener(status);
  }

  private send(action: WsClientAction): void {
    if (this.socket?.readyState === OPEN) this.socket.send(JSON.stringify(action));
  }

  private connect(): void {
    if (this.closed) return;
    const socket = this.options.createSocket(this.options.url);
    this.socket = socket;
    socket.onopen = () => {
      this.attempt = 0;
      this.setStatus("open");
      // Rejoin every channel from its cursor: the relay replays only what came after it.
      for (const channel of this.channels.keys()) this.send(this.cursors.joinAction(channel));
      this.pingTimer = setInterval(
        () => this.send({ action: "ping" }),
        this.options.pingIntervalMs,
      );
    };
    socket.onmessage = (ev) => this.handleFrame(ev.data);
    socket.onerror = () => {};
    socket.onclose = () => {
      if (this.pingTimer) clearInterval(this.pingTimer);
      this.pingTimer = null;
      if (this.socket !== socket) return;
      this.socket = null;
      if (this.closed) return;
      this.setStatus("reconnecting");
      const { minBackoffMs, maxBackoffMs } = this.options;
      const backoff = Math.min(maxBackoffMs, minBackoffMs * 2 ** this.attempt);
      const delay = Math.max(backoff * (0.8 + Math.random() * 0.4), this.pauseMs);
      this.attempt += 1;
      this.pauseMs = 0;
      this.retryTimer = setTimeout(() => this.connect(), delay);
    };
  }

  private handleFrame(data: unknown): void {
    if (typeof data !== "string") return;
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      return;
    }
    const parsed = WsServerFrameSchema.safeParse(json);
    if (!parsed.success) return;
    const frame = parsed.data;
    if ("id" in frame) {
      if (!this.cursors.accept(frame.channel, frame.id)) return;
      for (const h of this.channels.get(frame.channel) ?? []) h.onEvent?.(frame);
      return;
    }
    switch (frame.type) {
      case "stream.chunk":
        for (const h of this.channels.get(frame.channel) ?? []) h.onChunk?.(frame);
        return;
      case "catchup.overflow":
        for (const h of this.channels.get(frame.channel) ?? []) h.onOverflow?.();
        return;
      case "subscription.confirmed":
        for (const h of this.channels.get(frame.channel) ?? []) h.onConfirmed?.();
        return;
      case "connection.established":
      case "subscription.error":
      case "pong":
      case "error":
        return;
      default: {
        const unreachable: never = frame;
        throw new Error(`unhandled frame ${JSON.stringify(unreachable)}`);
      }
    }
  }
}

/** A WebSocket to the stream relay that reconnects and catches up from the last event id. */
export function createLiveConnection(options: LiveConnectionOptions): LiveConnection {
  return new ReconnectingLiveConnection({
    createSocket: (url) => new WebSocket(url) as unknown as SocketLike,
    minBackoffMs: 500,
    maxBackoffMs: 5_000,
    pingIntervalMs: 25_000,
    ...options,
  });
}
