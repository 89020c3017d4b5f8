import type { StreamChunk } from "@tarsy/contracts";
import type { Logger } from "@tarsy/runtime";
import type { ChannelTarget } from "./channels.ts";
import type { EventLog, LiveFeed, StoredEvent, TransientSubscription } from "./event-log.ts";
import { encodeChunkFrame, encodeEventFrame, type Frame } from "./frames.ts";
import { ProjectGate } from "./project-gate.ts";
import type { ProjectOf, SessionProjects } from "./session-projects.ts";

/**
 * A client's interest in one channel: frames are encoded once and the same bytes go to every
 * client. With authorization on, each frame comes with its session's project (looked up once
 * per session, in the feed, before the frame reaches any client); off, `project` is undefined.
 */
export interface FeedListener {
  onEvent(seq: number, frame: Frame, project?: ProjectOf): void;
  onChunk(frame: Frame, project?: ProjectOf): void;
  /** A session's project could not be learned: nothing can go out unchecked (fail closed). */
  onAccessUnavailable(): void;
}

interface SharedFeed {
  listeners: Set<FeedListener>;
  ready: Promise<{ live: LiveFeed; chunks: TransientSubscription | null }>;
}

/**
 * One live feed per channel per process, shared by every client watching it: made when the
 * first client subscribes, dropped with the last. The relay's cost grows with what is watched.
 */
export class SharedFeeds {
  private readonly feeds = new Map<string, SharedFeed>();

  constructor(
    private readonly log: EventLog,
    private readonly logger: Logger,
    /** Set while authorization is on: every frame waits for its session's project. */
    private readonly projects: SessionProjects | null = null,
  ) {}

  get size(): number {
    return this.feeds.size;
  }

  /** Adds a listener; resolves once the shared feed is live (events after that reach it). */
  async join(target: ChannelTarget, listener: FeedListener): Promise<void> {
    let feed = this.feeds.get(target.channel);
    if (!feed) {
      const listeners = new Set<FeedListener>();
      feed = { listeners, ready: this.open(target, listeners) };
      this.feeds.set(target.channel, feed);
      feed.ready.catch(() => {
        if (this.feeds.get(target.channel) === feed) this.feeds.delete(target.channel);
      });
    }
    feed.listeners.add(listener);
    try {
      await feed.ready;
    } catch (err) {
      feed.listeners.delete(listener);
      throw err;
    }
  }

  async leave(target: ChannelTarget, listener: FeedListener): Promise<void> {
    const feed = this.feeds.get(target.channel);
    if (!feed) return;
    feed.listeners.delete(listener);
    if (feed.listeners.size > 0) return;
    this.feeds.delete(target.channel);
    const { live, chunks } = await feed.ready.catch(() => ({ live: null, chunks: null }));
    chunks?.stop();
    await live?.stop();
    this.logger.debug({ channel: target.channel }, "feed closed");
  }

  async close(): Promise<void> {
    const all = [...this.feeds.values()];
    this.feeds.clear();
    await Promise.all(
      all.map(async (feed) => {
        const opened = await feed.ready.catch(() => null);
        opened?.chunks?.stop();
        await opened?.live.stop();
      }),
    );
  }

  private async open(target: ChannelTarget, listeners: Set<FeedListener>) {
    const gate = this.projects
      ? new ProjectGate(this.projects, (err) => {
          this.logger.error({ err, channel: target.channel }, "session project lookup failed");
          for (const listener of listeners) listener.onAccessUnavailable();
        })
      : null;
    // Events this feed saw complete: a chunk of one of them is stale (a runner still streaming
    // what was already ended, e.g. by a cancel) and would land after the event's final state.
    const ended = new Set<string>();
    const live = await this.log.follow(target.subject, (event: StoredEvent) => {
      // Only a session's feed carries chunks; the set lives and dies with that feed.
      if (target.sessionId !== null && event.payload.type === "timeline_event.completed")
        ended.add(event.payload.event_id);
      const frame = encodeEventFrame(target.channel, event);
      if (!gate) {
        for (const listener of listeners) listener.onEvent(event.seq, frame);
        return;
      }
      gate.pass(event.payload.session_id, (project) => {
        for (const listener of listeners) listener.onEvent(event.seq, frame, project);
      });
    });
    const chunks =
      target.sessionId === null
        ? null
        : this.log.subscribeChunks(target.sessionId, (chunk: StreamChunk) => {
            if (ended.has(chunk.event_id)) return;
            const frame = encodeChunkFrame(target.channel, chunk);
            if (!gate) {
              for (const listener of listeners) listener.onChunk(frame);
              return;
            }
            gate.pass(chunk.session_id, (project) => {
              for (const listener of listeners) listener.onChunk(frame, project);
            });
          });
    this.logger.debug({ channel: target.channel, startsAfter: live.startsAfter }, "feed opened");
    return { live, chunks };
  }
}
