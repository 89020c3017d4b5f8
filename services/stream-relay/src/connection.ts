import type { Channel, WsClientAction } from "@tarsy/contracts";
import type { Logger } from "@tarsy/runtime";
import WebSocket, { type RawData } from "ws";
import type { FilterReason, SessionVisibility } from "./access.ts";
import { ControlAdmission, type ControlLimits } from "./admission.ts";
import { type ChannelTarget, channelTarget } from "./channels.ts";
import { parseClientFrame } from "./client-frame.ts";
import type { EventLog } from "./event-log.ts";
import type { FeedListener, SharedFeeds } from "./feeds.ts";
import { encodeControlFrame, encodeEventFrame, type Frame } from "./frames.ts";
import type { ProjectOf, SessionProjects } from "./session-projects.ts";

export interface ConnectionLimits extends ControlLimits {
  /** Most events a catch-up (or the replay on subscribe) sends before answering overflow. */
  catchupLimit: number;
  maxSubscriptions: number;
  /** Bytes queued for one client before it is dropped as too slow. */
  sendBufferLimitBytes: number;
  /**
   * After a slow client is told to go (the close frame waits behind its queued data), how long
   * it has to read up to it before the socket is cut. Nothing more is queued meanwhile.
   */
  slowClientGraceMs: number;
}

/** Told the type of every frame sent to a client (metrics). */
export type FrameSentListener = (type: string) => void;

/** Close code for a client that does not read fast enough. */
export const CLOSE_SLOW_CONSUMER = 4008;
/** Close code (RFC 6455 policy violation) for a client that keeps sending over its rate limit. */
export const CLOSE_POLICY_VIOLATION = 1008;
/**
 * Close code (RFC 6455 "try again later") when a session's project cannot be learned (the
 * database is unreachable): the client reconnects and catches up from its last event id.
 */
export const CLOSE_ACCESS_UNAVAILABLE = 1013;

/** With authorization on: what this connection may see, and where projects come from. */
export interface ConnectionAccess {
  visibility: SessionVisibility;
  projects: SessionProjects;
  /** Told each frame withheld from this client (metrics). */
  onFiltered(reason: FilterReason): void;
}

interface ChannelState {
  target: ChannelTarget;
  /** Highest event sequence sent to this client on this channel. */
  cursor: number;
  /** While the replay runs, live frames wait here (seq null for chunks), with their project. */
  buffer: Array<[number | null, Frame, ProjectOf | undefined]> | null;
  listener: FeedListener;
}

/** One WebSocket client: its channels, cursors and the protocol's actions. */
export class ClientConnection {
  private readonly channels = new Map<Channel, ChannelState>();
  private readonly admission: ControlAdmission;
  /** Catch-ups waiting to run, by channel: a newer one for the same channel replaces the request. */
  private readonly queuedCatchups = new Map<Channel, { lastEventId: number }>();
  /** Catch-ups waiting or running. */
  private catchupsPending = 0;
  /** Actions waiting or running. */
  private pending = 0;
  private queue: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly ws: WebSocket,
    readonly id: string,
    readonly user: string | null,
    private readonly feeds: SharedFeeds,
    private readonly log: EventLog,
    private readonly limits: ConnectionLimits,
    private readonly logger: Logger,
    private readonly onFrameSent: FrameSentListener = () => {},
    /** Absent while authorization is off: every frame goes out. */
    private readonly access: ConnectionAccess | null = null,
  ) {
    this.admission = new ControlAdmission(limits);
    this.send(encodeControlFrame({ type: "connection.established", connection_id: id, user }));
  }

  get subscriptionCount(): number {
    return this.channels.size;
  }

  /** Actions waiting or running for this client (bounded by the control burst). */
  get pendingActions(): number {
    return this.pending;
  }

  /**
   * Admits one client frame (rate limit), then runs its action after the ones before it, in the
   * order the client sent them. Catch-ups of one channel waiting to run are coalesced.
   */
  handleMessage(data: RawData, isBinary = false): void {
    if (this.closed) return;
    const decision = this.admission.admit(this.pending);
    switch (decision) {
      case "admit":
        break;
      case "warn":
        this.logger.warn({ connection_id: this.id }, "client over its control rate limit");
        this.sendError(
          "rate_limited",
          `too many messages (limit ${this.limits.controlRatePerSec}/s, burst ${this.limits.controlBurst}); messages are dropped`,
        );
        return;
      case "drop":
        return;
      case "close":
        this.closeForAbuse();
        return;
      default: {
        const unreachable: never = decision;
        throw new Error(`unhandled admission ${String(unreachable)}`);
      }
    }
    const parsed = parseClientFrame(data, isBinary);
    if (parsed.ok && parsed.action.action === "catchup") {
      const { channel, last_event_id } = parsed.action;
      const queued = this.queuedCatchups.get(channel);
      if (queued) {
        queued.lastEventId = last_event_id;
        return;
      }
      if (this.catchupsPending >= this.limits.maxPendingCatchups) {
        this.sendError(
          "too_many_catchups",
          `too many catch-ups in progress (limit ${this.limits.maxPendingCatchups})`,
        );
        return;
      }
      const request = { lastEventId: last_event_id };
      this.queuedCatchups.set(channel, request);
      this.catchupsPending++;
      this.enqueue(async () => {
        this.queuedCatchups.delete(channel);
        try {
          await this.catchup(channel, request.lastEventId);
        } finally {
          this.catchupsPending--;
        }
      });
      return;
    }
    // A catch-up queued before a subscribe/unsubscribe of its channel takes no later requests.
    if (parsed.ok && "channel" in parsed.action) this.queuedCatchups.delete(parsed.action.channel);
    this.enqueue(() => (parsed.ok ? this.dispatch(parsed.action) : this.answer(parsed)));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.queuedCatchups.clear();
    const states = [...this.channels.values()];
    this.channels.clear();
    await Promise.all(states.map((s) => this.feeds.leave(s.target, s.listener)));
  }

  private enqueue(run: () => Promise<void>): void {
    this.pending++;
    this.queue = this.queue
      .then(() => (this.closed ? undefined : run()))
      .catch((err: unknown) => {
        this.logger.error({ err }, "action failed");
        this.sendError("internal", "action failed");
      })
      .finally(() => {
        this.pending--;
      });
  }

  private async answer(error: { code: string; message: string }): Promise<void> {
    this.sendError(error.code, error.message);
  }

  /**
   * Whether a frame about a session may go to this client: always with authorization off;
   * on, only when its session's project is known and the identity may `get` it.
   */
  private visible(frame: Frame, project: ProjectOf | undefined): boolean {
    if (!this.access) return true;
    const reason =
      frame.sessionId === undefined
        ? "unknown_session"
        : this.access.visibility.check(frame.sessionId, project ?? null);
    if (reason === null) return true;
    this.access.onFiltered(reason);
    return false;
  }

  /** Fail closed: a session's project could not be learned, so this client gets nothing more. */
  private closeForAccess(err?: unknown): void {
    if (this.closed) return;
    this.logger.warn({ err, connection_id: this.id }, "closing client: authorization unavailable");
    void this.close();
    this.ws.close(CLOSE_ACCESS_UNAVAILABLE, "authorization check unavailable; reconnect");
    setTimeout(() => this.ws.terminate(), this.limits.slowClientGraceMs).unref();
  }

  private closeForAbuse(): void {
    this.logger.warn({ connection_id: this.id }, "closing client: sustained rate limit abuse");
    void this.close();
    this.ws.close(CLOSE_POLICY_VIOLATION, "rate limit exceeded");
    setTimeout(() => this.ws.terminate(), this.limits.slowClientGraceMs).unref();
  }

  private async dispatch(action: WsClientAction): Promise<void> {
    switch (action.action) {
      case "ping":
        this.send(encodeControlFrame({ type: "pong" }));
        return;
      case "subscribe":
        if (this.channels.has(action.channel)) {
          this.send(
            encodeControlFrame({ type: "subscription.confirmed", channel: action.channel }),
          );
          return;
        }
        await this.subscribe(action.channel, 0);
        return;
      case "catchup":
        await this.catchup(action.channel, action.last_event_id);
        return;
      case "unsubscribe":
        await this.unsubscribe(action.channel);
        return;
      default: {
        const unreachable: never = action;
        throw new Error(`unhandled action ${JSON.stringify(unreachable)}`);
      }
    }
  }

  /**
   * Replays a channel after `lastEventId`, then follows it live. On a channel this connection
   * already follows nothing is sent again: its live feed has delivered everything after the
   * cursor, and a connection never sends one event twice.
   */
  private async catchup(channel: Channel, lastEventId: number): Promise<void> {
    const state = this.channels.get(channel);
    if (state) {
      state.cursor = Math.max(state.cursor, lastEventId);
      this.send(encodeControlFrame({ type: "subscription.confirmed", channel }));
      return;
    }
    await this.subscribe(channel, lastEventId);
  }

  /** Joins the live feed first, then replays what came after `afterSeq`, then flushes. */
  private async subscribe(channel: Channel, afterSeq: number): Promise<void> {
    if (this.channels.size >= this.limits.maxSubscriptions) {
      this.send(
        encodeControlFrame({
          type: "subscription.error",
          channel,
          message: `too many subscriptions (limit ${this.limits.maxSubscriptions})`,
        }),
      );
      return;
    }
    const target = channelTarget(channel);
    const state: ChannelState = {
      target,
      cursor: afterSeq,
      buffer: [],
      listener: {
        onEvent: (seq, frame, project) => {
          if (state.buffer) state.buffer.push([seq, frame, project]);
          else if (seq > state.cursor) {
            state.cursor = seq;
            if (this.visible(frame, project)) this.send(frame);
          }
        },
        onChunk: (frame, project) => {
          if (state.buffer) state.buffer.push([null, frame, project]);
          else if (this.visible(frame, project)) this.send(frame);
        },
        onAccessUnavailable: () => this.closeForAccess(),
      },
    };
    this.channels.set(channel, state);
    try {
      await this.feeds.join(target, state.listener);
    } catch (err) {
      this.channels.delete(channel);
      this.logger.error({ err, channel }, "could not open feed");
      this.send(
        encodeControlFrame({
          type: "subscription.error",
          channel,
          message: "event log unavailable",
        }),
      );
      return;
    }
    try {
      await this.replay(state);
    } catch (err) {
      if (!(err instanceof AccessUnavailable)) throw err;
      this.closeForAccess(err.cause);
      return;
    }
    this.send(encodeControlFrame({ type: "subscription.confirmed", channel }));
    const pending = state.buffer ?? [];
    state.buffer = null;
    for (const [seq, frame, project] of pending) {
      if (seq === null) {
        if (this.visible(frame, project)) this.send(frame);
      } else if (seq > state.cursor) {
        state.cursor = seq;
        if (this.visible(frame, project)) this.send(frame);
      }
    }
  }

  /** Projects of the sessions named (authorization on), or AccessUnavailable. */
  private async projectsOf(ids: readonly string[]): Promise<Map<string, ProjectOf>> {
    if (!this.access) return new Map();
    try {
      return await this.access.projects.resolve(ids);
    } catch (err) {
      throw new AccessUnavailable(err);
    }
  }

  private async replay(state: ChannelState): Promise<void> {
    const { subject, channel, sessionId } = state.target;
    if (this.access && sessionId !== null) {
      // A session this client may not see is answered as one that does not exist: nothing
      // replayed, no overflow; its live frames are filtered like every other.
      const project = (await this.projectsOf([sessionId])).get(sessionId) ?? null;
      if (this.access.visibility.check(sessionId, project) !== null) return;
    }
    const { events, more } = await this.log.read(subject, state.cursor, this.limits.catchupLimit);
    if (more) {
      state.cursor = await this.log.lastSequence(subject);
      this.send(
        encodeControlFrame({ type: "catchup.overflow", channel, limit: this.limits.catchupLimit }),
      );
      return;
    }
    const projects = await this.projectsOf(events.map((e) => e.payload.session_id));
    for (const event of events) {
      if (event.seq <= state.cursor) continue;
      state.cursor = event.seq;
      const frame = encodeEventFrame(channel, event);
      if (this.visible(frame, projects.get(event.payload.session_id))) this.send(frame);
    }
  }

  private async unsubscribe(channel: Channel): Promise<void> {
    const state = this.channels.get(channel);
    if (!state) return;
    this.channels.delete(channel);
    await this.feeds.leave(state.target, state.listener);
  }

  private sendError(code: string, message: string): void {
    this.send(encodeControlFrame({ type: "error", code, message }));
  }

  /** Sends one frame, or drops the client when its send buffer is past the limit. */
  private send(frame: Frame): void {
    if (this.closed || this.ws.readyState !== WebSocket.OPEN) return;
    if (this.ws.bufferedAmount > this.limits.sendBufferLimitBytes) {
      this.logger.warn(
        { connection_id: this.id, buffered: this.ws.bufferedAmount },
        "dropping slow client",
      );
      void this.close();
      this.ws.close(CLOSE_SLOW_CONSUMER, "send buffer overflow: client too slow");
      setTimeout(() => this.ws.terminate(), this.limits.slowClientGraceMs).unref();
      return;
    }
    this.ws.send(frame.data, { binary: false });
    this.onFrameSent(frame.type);
  }
}

/** A session's project could not be learned: the connection is closed rather than served unchecked. */
class AccessUnavailable extends Error {
  constructor(override readonly cause: unknown) {
    super("session project lookup failed");
    this.name = "AccessUnavailable";
  }
}
