import {
  type JetStreamClient,
  type JetStreamManager,
  jetstream,
  jetstreamManager,
} from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import {
  CONSUMERS,
  type ConsumerKey,
  type PayloadOf,
  type PersistentMessageKey,
  type StreamKey,
  type TransientMessageKey,
} from "@tarsy/contracts";
import type { Logger } from "@tarsy/runtime";
import { type ConnectionState, openConnection } from "./connection.ts";
import {
  type ConsumeOptions,
  type ConsumerHandlers,
  startWorkConsumer,
  type WorkConsumer,
} from "./consume.ts";
import {
  type DeadLetterPage,
  discardDeadLetter,
  listDeadLetters,
  redriveDeadLetter,
} from "./dead-letters.ts";
import { BusNotConnectedError } from "./errors.ts";
import {
  type EventFeed,
  type EventReadOptions,
  type EventReplay,
  followEvents,
  lastEventSequence,
  replayEvents,
} from "./events.ts";
import { Naming } from "./naming.ts";
import { type BusObserver, notify, type PublishedMessage } from "./observer.ts";
import { type BusOptions, DEFAULT_PREFIX } from "./options.ts";
import { type ProvisionReport, provisionAll } from "./provision.ts";
import { type PublishResult, publishCore, publishPersistent } from "./publish.ts";
import { subscribeCore, type TransientHandler, type TransientSubscription } from "./transient.ts";

export interface BusHealth {
  connected: boolean;
  server?: string;
  rttMs?: number;
  error?: string;
}

/** The services' only door to NATS: typed by the contracts catalog. */
export interface Bus {
  readonly prefix: string;
  readonly streamSuffix: string;
  /** The raw connection, for modules inside packages/bus (e.g. request/reply). */
  readonly connection: NatsConnection;
  readonly logger: Logger;
  /** Absolute subject of a relative one (`work.x` → `<prefix>.work.x`). */
  subject(relative: string): string;
  /** Stream name of a catalog stream, suffix included. */
  streamName(key: StreamKey): string;

  isConnected(): boolean;
  health(timeoutMs?: number): Promise<BusHealth>;
  /** Messages of a work consumer not yet acknowledged: waiting plus being worked on. */
  workBacklog(key: ConsumerKey): Promise<number>;

  /** Creates or updates every stream and durable consumer of the catalog (idempotent). */
  provision(): Promise<ProvisionReport>;

  /** Validates, then stores the message under each of its subjects (deduplicated by id). */
  publish<K extends PersistentMessageKey>(key: K, payload: PayloadOf<K>): Promise<PublishResult[]>;
  /** Validates, then sends on core NATS; returns the absolute subjects. */
  publishTransient<K extends TransientMessageKey>(key: K, payload: PayloadOf<K>): string[];

  /** Pulls work from a durable consumer, one handler per message kind. */
  consume<C extends ConsumerKey>(
    key: C,
    handlers: ConsumerHandlers<C>,
    options?: ConsumeOptions,
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
  /** Newest stream sequence of a subject of the events stream, 0 when it has none. */
  lastSequence(subject: string): Promise<number>;

  listDeadLetters(options?: { afterSeq?: number; limit?: number }): Promise<DeadLetterPage>;
  redriveDeadLetter(seq: number): Promise<PublishResult>;
  discardDeadLetter(seq: number): Promise<void>;

  /** Stops every consumer (handing back what it cannot finish), then drains the connection. */
  drain(): Promise<void>;
  /** Closes at once; unacknowledged work is redelivered by the server after ack_wait. */
  close(): Promise<void>;
}

class NatsBus implements Bus {
  readonly prefix: string;
  readonly streamSuffix: string;
  private state: ConnectionState = "connected";
  private readonly consumers = new Set<WorkConsumer>();

  constructor(
    readonly connection: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly naming: Naming,
    private readonly options: BusOptions,
    readonly logger: Logger,
  ) {
    this.prefix = naming.prefix;
    this.streamSuffix = naming.streamSuffix;
  }

  setState(state: ConnectionState): void {
    this.state = state;
  }

  private get deps() {
    return {
      js: this.js,
      jsm: this.jsm,
      naming: this.naming,
      logger: this.logger,
      observer: this.observer,
    };
  }

  private get observer(): BusObserver {
    return this.options.observer ?? {};
  }

  private ensureOpen(): void {
    if (this.connection.isClosed()) throw new BusNotConnectedError("the bus connection is closed");
  }

  subject(relative: string): string {
    return this.naming.subject(relative);
  }

  streamName(key: StreamKey): string {
    return this.naming.stream(key);
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

  async workBacklog(key: ConsumerKey): Promise<number> {
    this.ensureOpen();
    const def = CONSUMERS[key];
    const info = await this.jsm.consumers.info(this.naming.stream(def.stream), def.durable);
    return info.num_pending + info.num_ack_pending;
  }

  async provision(): Promise<ProvisionReport> {
    this.ensureOpen();
    return provisionAll(this.jsm, this.naming, this.options, this.logger);
  }

  async publish<K extends PersistentMessageKey>(
    key: K,
    payload: PayloadOf<K>,
  ): Promise<PublishResult[]> {
    this.ensureOpen();
    const results = await publishPersistent(this.js, this.naming, key, payload);
    if (results.some((r) => !r.duplicate)) this.published({ key, payload } as PublishedMessage);
    return results;
  }

  publishTransient<K extends TransientMessageKey>(key: K, payload: PayloadOf<K>): string[] {
    this.ensureOpen();
    const subjects = publishCore(this.connection, this.naming, key, payload);
    this.published({ key, payload } as PublishedMessage);
    return subjects;
  }

  private published(message: PublishedMessage): void {
    const { observer } = this;
    if (observer.published) notify(() => observer.published?.(message));
  }

  async consume<C extends ConsumerKey>(
    key: C,
    handlers: ConsumerHandlers<C>,
    options?: ConsumeOptions,
  ): Promise<WorkConsumer> {
    this.ensureOpen();
    const consumer = await startWorkConsumer(this.deps, key, handlers, options);
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
    this.ensureOpen();
    return subscribeCore(this.connection, this.naming, this.logger, key, subject, handler);
  }

  async replayEvents(options: EventReadOptions & { limit: number }): Promise<EventReplay> {
    this.ensureOpen();
    return replayEvents(this.deps, options);
  }

  async followEvents(options: EventReadOptions): Promise<EventFeed> {
    this.ensureOpen();
    return followEvents(this.deps, options);
  }

  async lastSequence(subject: string): Promise<number> {
    this.ensureOpen();
    return lastEventSequence(this.deps, subject);
  }

  async listDeadLetters(options?: { afterSeq?: number; limit?: number }): Promise<DeadLetterPage> {
    this.ensureOpen();
    return listDeadLetters(this.deps, options);
  }

  async redriveDeadLetter(seq: number): Promise<PublishResult> {
    this.ensureOpen();
    return redriveDeadLetter(this.deps, seq);
  }

  async discardDeadLetter(seq: number): Promise<void> {
    this.ensureOpen();
    return discardDeadLetter(this.deps, seq);
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
  const js = jetstream(connection);
  const jsm = await jetstreamManager(connection);
  bus = new NatsBus(connection, js, jsm, naming, options, logger);
  bus.setState(initial);
  return bus;
}
