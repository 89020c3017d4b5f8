import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type {
  ConsumerKey,
  PayloadOf,
  PersistentMessageKey,
  StreamKey,
  TransientMessageKey,
} from "@tarsy/contracts";
import type { Logger } from "@tarsy/runtime";
import { type ConnectionState, openConnection } from "./connection.ts";
import {
  type ConsumeOptions,
  type ConsumerHandlers,
  startWorkConsumer,
  type WorkConsumer,
} from "./consume.ts";
import { type BusCore, ensureOpen, registerCore } from "./core.ts";
import {
  type EventFeed,
  type EventReadOptions,
  type EventReplay,
  followEvents,
  replayEvents,
} from "./events.ts";
import { Naming } from "./naming.ts";
import { notify, type PublishedMessage } from "./observer.ts";
import { type BusOptions, DEFAULT_PREFIX } from "./options.ts";
import {
  type PersistentMessage,
  type PublishResult,
  publishCore,
  publishPersistent,
} from "./publish.ts";
import { subscribeCore, type TransientHandler, type TransientSubscription } from "./transient.ts";

export interface BusHealth {
  connected: boolean;
  server?: string;
  rttMs?: number;
  error?: string;
}

/**
 * The services' door to NATS for publishing and consuming, typed by the contracts catalog.
 * Provisioning, dead letters, backlogs and sequences are on `BusAdmin` (`createBusAdmin`).
 */
export interface Bus {
  readonly prefix: string;
  readonly streamSuffix: string;
  readonly logger: Logger;
  /** Absolute subject of a relative one (`work.x` → `<prefix>.work.x`). */
  subject(relative: string): string;
  /** Stream name of a catalog stream, suffix included. */
  streamName(key: StreamKey): string;

  isConnected(): boolean;
  health(timeoutMs?: number): Promise<BusHealth>;

  /** Validates, then stores the message under each of its subjects (deduplicated by id). */
  publish<K extends PersistentMessageKey>(key: K, payload: PayloadOf<K>): Promise<PublishResult[]>;
  /** `publish` of a `{ key, payload }` pair, e.g. an outbox row. */
  publishMessage(message: PersistentMessage): Promise<PublishResult[]>;
  /** Validates, then sends on core NATS; returns the absolute subjects. */
  publishTransient<K extends TransientMessageKey>(key: K, payload: PayloadOf<K>): string[];
  /** Resolves once the server has everything sent so far (and every subscription made). */
  flush(): Promise<void>;

  /** Pulls work from a durable consumer, one handler per message kind. */
  consume<C extends ConsumerKey>(
    key: C,
    handlers: ConsumerHandlers<C>,
    options?: ConsumeOptions<C>,
  ): Promise<WorkConsumer>;
  subscribeTransient<K extends TransientMessageKey>(
    key: K,
    subject: string,
    handler: TransientHandler<K>,
  ): TransientSubscription;

  /** At most `limit` stored events of one subject from a start point, plus whether more exist. */
  replayEvents(options: EventReadOptions & { limit: number }): Promise<EventReplay>;
  /** Stored then live events of one subject, gap-free. */
  followEvents(options: EventReadOptions): Promise<EventFeed>;

  /** Stops every consumer (handing back what it cannot finish), then drains the connection. */
  drain(): Promise<void>;
  /** Closes at once; unacknowledged work is redelivered by the server after ack_wait. */
  close(): Promise<void>;
}

class NatsBus implements Bus {
  readonly prefix: string;
  readonly streamSuffix: string;
  readonly logger: Logger;
  private state: ConnectionState = "connected";
  private readonly consumers = new Set<WorkConsumer>();

  constructor(private readonly core: BusCore) {
    this.prefix = core.naming.prefix;
    this.streamSuffix = core.naming.streamSuffix;
    this.logger = core.logger;
  }

  setState(state: ConnectionState): void {
    this.state = state;
  }

  private get connection() {
    return this.core.connection;
  }

  subject(relative: string): string {
    return this.core.naming.subject(relative);
  }

  streamName(key: StreamKey): string {
    return this.core.naming.stream(key);
  }

  isConnected(): boolean {
    return this.state === "connected" && !this.connection.isClosed();
  }

  async health(timeoutMs = 2_000): Promise<BusHealth> {
    if (!this.isConnected()) return { connected: false, error: `connection ${this.state}` };
    let timer: NodeJS.Timeout | undefined;
    try {
      const rttMs = await Promise.race([
        this.connection.rtt(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no PONG in ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
      return { connected: true, server: this.connection.getServer(), rttMs };
    } catch (err) {
      return { connected: false, error: err instanceof Error ? err.message : String(err) };
    } finally {
      clearTimeout(timer);
    }
  }

  publish<K extends PersistentMessageKey>(key: K, payload: PayloadOf<K>): Promise<PublishResult[]> {
    return this.store(key, payload);
  }

  publishMessage(message: PersistentMessage): Promise<PublishResult[]> {
    return this.store(message.key, message.payload);
  }

  private async store<K extends PersistentMessageKey>(
    key: K,
    payload: PayloadOf<K>,
  ): Promise<PublishResult[]> {
    ensureOpen(this.core);
    const results = await publishPersistent(this.core.js, this.core.naming, key, payload);
    if (results.some((r) => !r.duplicate)) this.published({ key, payload } as PublishedMessage);
    return results;
  }

  publishTransient<K extends TransientMessageKey>(key: K, payload: PayloadOf<K>): string[] {
    ensureOpen(this.core);
    const subjects = publishCore(this.connection, this.core.naming, key, payload);
    this.published({ key, payload } as PublishedMessage);
    return subjects;
  }

  async flush(): Promise<void> {
    ensureOpen(this.core);
    await this.connection.flush();
  }

  private published(message: PublishedMessage): void {
    const { observer } = this.core;
    if (observer.published) notify(() => observer.published?.(message));
  }

  async consume<C extends ConsumerKey>(
    key: C,
    handlers: ConsumerHandlers<C>,
    options?: ConsumeOptions<C>,
  ): Promise<WorkConsumer> {
    ensureOpen(this.core);
    const consumer = await startWorkConsumer(this.core, key, handlers, options);
    this.consumers.add(consumer);
    const stop = consumer.stop.bind(consumer);
    return {
      key: consumer.key,
      inFlight: () => consumer.inFlight(),
      stop: async () => {
        const report = await stop();
        this.consumers.delete(consumer);
        return report;
      },
    };
  }

  subscribeTransient<K extends TransientMessageKey>(
    key: K,
    subject: string,
    handler: TransientHandler<K>,
  ): TransientSubscription {
    ensureOpen(this.core);
    const { naming, logger } = this.core;
    return subscribeCore(this.connection, naming, logger, key, subject, handler);
  }

  async replayEvents(options: EventReadOptions & { limit: number }): Promise<EventReplay> {
    ensureOpen(this.core);
    return replayEvents(this.core, options);
  }

  async followEvents(options: EventReadOptions): Promise<EventFeed> {
    ensureOpen(this.core);
    return followEvents(this.core, options);
  }

  async drain(): Promise<void> {
    if (this.connection.isClosed()) return;
    await Promise.all([...this.consumers].map((c) => c.stop()));
    this.consumers.clear();
    if (!this.connection.isClosed() && !this.connection.isDraining()) {
      await this.connection.drain();
    }
  }

  async close(): Promise<void> {
    if (this.connection.isClosed()) return;
    // Stop pulling (and signal running handlers) without waiting: what is not acked by now
    // is redelivered by the server after ack_wait.
    for (const consumer of this.consumers) void consumer.stop();
    this.consumers.clear();
    await this.connection.close();
  }
}

/** Connects to NATS (reconnecting forever) and returns the typed bus. */
export async function connectBus(options: BusOptions): Promise<Bus> {
  const naming = new Naming(options.prefix ?? DEFAULT_PREFIX, options.streamSuffix ?? "");
  const logger = options.logger.child({ component: "bus", prefix: naming.prefix });
  let bus: NatsBus | undefined;
  let initial: ConnectionState = "connected";
  const connection = await openConnection(options, logger, (state) => {
    if (bus) bus.setState(state);
    else initial = state;
  });
  const core: BusCore = {
    connection,
    js: jetstream(connection),
    jsm: await jetstreamManager(connection),
    naming,
    options,
    logger,
    observer: options.observer ?? {},
  };
  bus = new NatsBus(core);
  bus.setState(initial);
  registerCore(bus, core);
  return bus;
}
