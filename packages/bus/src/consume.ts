import type { Consumer, JetStreamClient, JsMsg } from "@nats-io/jetstream";
import {
  CONSUMERS,
  type ConsumerKey,
  type ConsumerMessageKey,
  consumerSubjectOf,
  type DeadLetter,
  MESSAGES,
  type MessageKey,
  type PayloadOf,
} from "@tarsy/contracts";
import type { Logger } from "@tarsy/runtime";
import { BusInvalidOptionsError, BusNotFoundError, describeError } from "./errors.ts";
import type { Naming } from "./naming.ts";
import { type BusObserver, notify } from "./observer.ts";
import { formatIssues, publishPersistent } from "./publish.ts";

export interface ConsumeContext {
  /** 1 on the first delivery. */
  deliveryCount: number;
  streamSeq: number;
  /** Relative subject, e.g. `work.runner.execution_requested`. */
  subject: string;
  /** Tells the server the handler is still working, resetting ack_wait (also done periodically). */
  working(): void;
  /** Fires when the consumer is stopping: finish quickly or throw to hand the work back. */
  signal: AbortSignal;
  /**
   * Asks for this message again after `delayMs` instead of acknowledging it when the handler
   * returns (e.g. a deadline that is not due yet). Not a failure, but it uses a delivery.
   */
  retryLater(delayMs: number): void;
}

export type MessageHandler<K extends MessageKey> = (
  payload: PayloadOf<K>,
  ctx: ConsumeContext,
) => Promise<void>;

/** One handler per message kind the consumer reads: a missing one is a compile error. */
export type ConsumerHandlers<C extends ConsumerKey> = {
  [K in ConsumerMessageKey<C>]: MessageHandler<K>;
};

export interface BackoffOptions {
  /** Delay before the second delivery. */
  initialMs: number;
  /** Multiplier per further delivery. */
  factor: number;
  maxMs: number;
}

/** One message a consumer reads, with its catalog key (a switch over `key` narrows it). */
export type ConsumedMessage<C extends ConsumerKey = ConsumerKey> = {
  [K in ConsumerMessageKey<C>]: { key: K; payload: PayloadOf<K> };
}[ConsumerMessageKey<C>];

export interface ConsumeOptions<C extends ConsumerKey = ConsumerKey> {
  /**
   * Which handler errors drop the message instead of retrying it: when this returns true the
   * message is acknowledged, neither redelivered nor dead-lettered. Meant for errors no retry
   * can fix that are no fault of the message either (it names a row that no longer exists).
   * Called once per failed attempt, before anything else is decided (even during shutdown),
   * so it is also where the service logs and counts the drop. Default: nothing is dropped.
   */
  drop?(err: unknown, message: ConsumedMessage<C>, ctx: ConsumeContext): boolean;
  /** Handlers running at once in this process, default 1. */
  concurrency?: number;
  /** Redelivery delay after a failed handler, default 1s doubling up to 60s. */
  backoff?: Partial<BackoffOptions>;
  /** How long `stop()` waits for running handlers before handing them back, default 10s. */
  stopTimeoutMs?: number;
  /** Lifetime of one pull request, default 2s (NATS minimum 1s); bounds how long stop waits. */
  fetchExpiresMs?: number;
}

export interface StopReport {
  /** Messages handed back to the server (nak) for another consumer to take. */
  handedBack: number;
  /** True when handlers were still running at the stop timeout. */
  timedOut: boolean;
}

export interface WorkConsumer {
  readonly key: ConsumerKey;
  /** Handlers running now. */
  inFlight(): number;
  /** Stops pulling, waits for running handlers (up to the stop timeout), naks the rest. */
  stop(): Promise<StopReport>;
}

export const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 1_000, factor: 2, maxMs: 60_000 };

export function backoffDelay(backoff: BackoffOptions, deliveryCount: number): number {
  const delay = backoff.initialMs * backoff.factor ** Math.max(0, deliveryCount - 1);
  return Math.min(backoff.maxMs, Math.round(delay));
}

interface InFlight {
  msg: JsMsg;
  settled: boolean;
  done: Promise<void>;
}

export interface WorkConsumerDeps {
  js: JetStreamClient;
  naming: Naming;
  logger: Logger;
  observer?: BusObserver;
}

/** Stream sequences this process handed back with `retryLater`, so their return is no redelivery. */
const MAX_SCHEDULED = 10_000;

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });

function headersOf(msg: JsMsg): Record<string, unknown> | undefined {
  if (!msg.headers) return undefined;
  const out: Record<string, string[]> = {};
  for (const key of msg.headers.keys()) out[key] = msg.headers.values(key);
  return out;
}

/** Starts a pull loop on a provisioned durable consumer. */
export async function startWorkConsumer<C extends ConsumerKey>(
  deps: WorkConsumerDeps,
  key: C,
  handlers: ConsumerHandlers<C>,
  options: ConsumeOptions<C> = {},
): Promise<WorkConsumer> {
  const def = CONSUMERS[key];
  const stream = deps.naming.stream(def.stream);
  const consumer = await deps.js.consumers.get(stream, def.durable).catch((err: unknown) => {
    throw new BusNotFoundError(`consumer ${stream}/${def.durable} not found; provision() first`, {
      cause: err,
    });
  });
  const info = await consumer.info(true);
  const impl = new WorkConsumerImpl(
    deps,
    key,
    handlers as unknown as AnyHandlers,
    options as ConsumeOptions,
    {
      ackWaitMs: Math.max(1, Math.round((info.config.ack_wait ?? 30e9) / 1e6)),
      // provision() keeps one spare delivery on the server; see desiredConsumer.
      maxDeliver:
        info.config.max_deliver && info.config.max_deliver > 0
          ? Math.max(1, info.config.max_deliver - 1)
          : Number.POSITIVE_INFINITY,
    },
  );
  impl.start(consumer);
  return impl;
}

type AnyHandlers = Record<string, MessageHandler<MessageKey>>;

class WorkConsumerImpl implements WorkConsumer {
  readonly key: ConsumerKey;
  private readonly inflight = new Set<InFlight>();
  private readonly controller = new AbortController();
  private readonly keyBySubject = new Map<string, MessageKey[]>();
  private readonly backoff: BackoffOptions;
  private readonly concurrency: number;
  private readonly logger: Logger;
  private slotWaiter: (() => void) | undefined;
  private loopDone: Promise<void> = Promise.resolve();
  private stopping: Promise<StopReport> | undefined;
  private handedBack = 0;
  private readonly scheduled = new Set<number>();

  constructor(
    private readonly deps: WorkConsumerDeps,
    key: ConsumerKey,
    private readonly handlers: AnyHandlers,
    private readonly options: ConsumeOptions,
    private readonly limits: { ackWaitMs: number; maxDeliver: number },
  ) {
    this.key = key;
    this.logger = deps.logger.child({ component: "bus.consumer", consumer: key });
    this.backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
    this.concurrency = options.concurrency ?? 1;
    if (!Number.isInteger(this.concurrency) || this.concurrency < 1) {
      throw new BusInvalidOptionsError(`concurrency must be a positive integer`);
    }
    for (const messageKey of CONSUMERS[key].messages as readonly MessageKey[]) {
      const subject = consumerSubjectOf(key, messageKey);
      if (!subject) throw new BusInvalidOptionsError(`${messageKey} has no work subject`);
      if (typeof handlers[messageKey] !== "function") {
        throw new BusInvalidOptionsError(`consumer ${key} has no handler for ${messageKey}`);
      }
      this.keyBySubject.set(subject, [...(this.keyBySubject.get(subject) ?? []), messageKey]);
    }
  }

  inFlight(): number {
    return this.inflight.size;
  }

  start(consumer: Consumer): void {
    this.loopDone = this.loop(consumer);
  }

  private get signal(): AbortSignal {
    return this.controller.signal;
  }

  private async loop(consumer: Consumer): Promise<void> {
    const expires = Math.max(1_000, this.options.fetchExpiresMs ?? 2_000);
    let lastError = "";
    while (!this.signal.aborted) {
      await this.waitForSlot();
      if (this.signal.aborted) break;
      try {
        const batch = await consumer.fetch({
          max_messages: this.concurrency - this.inflight.size,
          expires,
        });
        for await (const msg of batch) {
          if (this.signal.aborted) {
            // Arrived after stop(): hand it straight back.
            if (this.settle({ msg, settled: false, done: Promise.resolve() }, (m) => m.nak())) {
              this.handedBack++;
            }
            continue;
          }
          this.dispatch(msg);
        }
        lastError = "";
      } catch (err) {
        const text = describeError(err);
        if (text !== lastError) this.logger.warn({ err }, "pull failed; retrying");
        lastError = text;
        await sleep(1_000, this.signal);
      }
    }
    this.logger.debug("pull loop ended");
  }

  private waitForSlot(): Promise<void> {
    if (this.inflight.size < this.concurrency || this.signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      this.slotWaiter = resolve;
    });
  }

  private wake(): void {
    const waiter = this.slotWaiter;
    this.slotWaiter = undefined;
    waiter?.();
  }

  private dispatch(msg: JsMsg): void {
    const entry: InFlight = { msg, settled: false, done: Promise.resolve() };
    this.inflight.add(entry);
    entry.done = this.handle(entry)
      .catch((err: unknown) => {
        this.logger.error({ err, seq: msg.seq }, "unexpected error settling a message");
      })
      .finally(() => {
        this.inflight.delete(entry);
        this.wake();
      });
  }

  /** Runs `action` unless the message was already acked, naked or handed back. */
  private settle(entry: InFlight, action: (msg: JsMsg) => void): boolean {
    if (entry.settled) return false;
    entry.settled = true;
    try {
      action(entry.msg);
    } catch (err) {
      // The connection is gone: the server redelivers after ack_wait.
      this.logger.warn({ err, seq: entry.msg.seq }, "could not settle a message");
      return false;
    }
    return true;
  }

  private async handle(entry: InFlight): Promise<void> {
    const { msg } = entry;
    const deliveryCount = msg.info.deliveryCount;
    const streamSeq = msg.info.streamSequence;
    const subject = this.deps.naming.relative(msg.subject) ?? msg.subject;
    const log = this.logger.child({ subject, seq: streamSeq, delivery: deliveryCount });
    this.observeDelivery(streamSeq, deliveryCount);

    if (deliveryCount > this.limits.maxDeliver) {
      const error = `no outcome after ${this.limits.maxDeliver} deliveries (last attempt lost)`;
      await this.deadLetter(entry, subject, error, log);
      return;
    }
    let json: unknown;
    try {
      json = JSON.parse(msg.string());
    } catch (err) {
      await this.deadLetter(entry, subject, `invalid JSON: ${describeError(err)}`, log);
      return;
    }
    const candidates = this.keyBySubject.get(subject);
    if (!candidates) {
      await this.deadLetter(entry, subject, `no handler for subject ${subject}`, log);
      return;
    }
    // Kinds sharing a subject (an events consumer's) are told apart by their `type`.
    const messageKey = (candidates.find((k) => MESSAGES[k].schema.safeParse(json).success) ??
      candidates[0]) as MessageKey;
    const parsed = MESSAGES[messageKey].schema.safeParse(json);
    if (!parsed.success) {
      const issues = formatIssues(parsed.error).join("; ");
      await this.deadLetter(entry, subject, `invalid ${messageKey} payload: ${issues}`, log);
      return;
    }

    const working = () => {
      if (!entry.settled) msg.working();
    };
    const timer = setInterval(working, Math.max(50, Math.floor(this.limits.ackWaitMs / 3)));
    let retryInMs: number | undefined;
    const ctx: ConsumeContext = {
      deliveryCount,
      streamSeq,
      subject,
      working,
      signal: this.signal,
      retryLater: (delayMs) => {
        retryInMs = Math.max(0, Math.round(delayMs));
      },
    };
    const handler = this.handlers[messageKey] as MessageHandler<MessageKey>;
    const payload = parsed.data as PayloadOf<MessageKey>;
    try {
      await handler(payload, ctx);
      if (retryInMs === undefined) this.settle(entry, (m) => m.ack());
      else if (this.settle(entry, (m) => m.nak(retryInMs))) this.schedule(streamSeq);
    } catch (err) {
      if (this.drops(err, { key: messageKey, payload } as ConsumedMessage, ctx)) {
        this.settle(entry, (m) => m.ack());
        log.debug({ err }, "handler error drops the message; acknowledged");
      } else if (this.signal.aborted) {
        if (this.settle(entry, (m) => m.nak())) this.handedBack++;
        log.info({ err }, "handler stopped by shutdown; handed back");
      } else if (deliveryCount >= this.limits.maxDeliver) {
        await this.deadLetter(entry, subject, describeError(err), log);
      } else {
        const delayMs = backoffDelay(this.backoff, deliveryCount);
        this.settle(entry, (m) => m.nak(delayMs));
        log.warn({ err, delayMs }, "handler failed; will be redelivered");
      }
    } finally {
      clearInterval(timer);
    }
  }

  /** The `drop` option's verdict; a `drop` that throws drops nothing. */
  private drops(err: unknown, message: ConsumedMessage, ctx: ConsumeContext): boolean {
    const { drop } = this.options;
    if (!drop) return false;
    try {
      return drop(err, message, ctx);
    } catch (dropErr) {
      this.logger.error({ err: dropErr }, "the consumer's drop option threw; not dropping");
      return false;
    }
  }

  private observeDelivery(streamSeq: number, deliveryCount: number): void {
    if (this.scheduled.delete(streamSeq) || deliveryCount <= 1) return;
    const observer = this.deps.observer;
    if (observer?.redelivered) notify(() => observer.redelivered?.(this.key, deliveryCount));
  }

  private schedule(streamSeq: number): void {
    this.scheduled.add(streamSeq);
    if (this.scheduled.size > MAX_SCHEDULED) {
      const oldest = this.scheduled.values().next().value;
      if (oldest !== undefined) this.scheduled.delete(oldest);
    }
  }

  private async deadLetter(
    entry: InFlight,
    subject: string,
    error: string,
    log: Logger,
  ): Promise<void> {
    const { msg } = entry;
    const headers = headersOf(msg);
    const letter: DeadLetter = {
      v: 1,
      original_subject: subject,
      stream: msg.info.stream,
      stream_seq: msg.info.streamSequence,
      deliveries: msg.info.deliveryCount,
      error,
      data: msg.string(),
      ...(headers ? { headers } : {}),
      failed_at: new Date().toISOString(),
    };
    try {
      await publishPersistent(this.deps.js, this.deps.naming, "deadLetter", letter);
      this.settle(entry, (m) => m.ack());
      log.error({ error }, "message dead-lettered");
      const observer = this.deps.observer;
      if (observer?.deadLettered) notify(() => observer.deadLettered?.(this.key));
    } catch (err) {
      const delayMs = backoffDelay(this.backoff, msg.info.deliveryCount);
      this.settle(entry, (m) => m.nak(delayMs));
      log.error({ err, error }, "dead-lettering failed; will be redelivered");
    }
  }

  stop(): Promise<StopReport> {
    if (this.stopping) return this.stopping;
    this.stopping = (async () => {
      this.controller.abort();
      this.wake();
      const timeoutMs = this.options.stopTimeoutMs ?? 10_000;
      let timer: NodeJS.Timeout | undefined;
      const timedOut = await Promise.race([
        Promise.all([this.loopDone, ...[...this.inflight].map((e) => e.done)]).then(() => false),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(true), timeoutMs);
        }),
      ]);
      clearTimeout(timer);
      for (const entry of this.inflight) {
        if (this.settle(entry, (m) => m.nak())) this.handedBack++;
      }
      const report = { handedBack: this.handedBack, timedOut };
      this.logger.info(report, "consumer stopped");
      return report;
    })();
    return this.stopping;
  }
}
