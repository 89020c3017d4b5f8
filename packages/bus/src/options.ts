import type { ConsumerKey, StreamKey } from "@tarsy/contracts";
import type { Logger } from "@tarsy/runtime";
import type { BusObserver } from "./observer.ts";

export type BusAuth =
  | { kind: "none" }
  | { kind: "token"; token: string }
  | { kind: "userPass"; user: string; pass: string }
  /** A NATS `.creds` file (JWT + nkey seed). */
  | { kind: "credentials"; file: string };

export interface BusTlsOptions {
  caFile?: string;
  certFile?: string;
  keyFile?: string;
}

/** Settings of one durable work consumer, applied by `provision()`. */
export interface ConsumerSettings {
  /** How long a delivery may stay unacknowledged before it is redelivered. */
  ackWaitMs: number;
  /** Deliveries before a failing message is dead-lettered. */
  maxDeliver: number;
  /** Unacknowledged messages the server hands out at once, over all replicas. */
  maxAckPending: number;
}

export interface BusOptions {
  /** e.g. `nats://127.0.0.1:4222` (one or several). */
  servers: string | string[];
  /** Connection name shown by the server (`nats server report connections`). */
  name: string;
  logger: Logger;
  /** Subject prefix, default `tarsy`. */
  prefix?: string;
  /** Appended to every stream name, default "" (tests use e.g. `_T1A2B`). */
  streamSuffix?: string;
  auth?: BusAuth;
  tls?: BusTlsOptions;
  /** Stream replicas created by `provision()`, default 1. */
  replicas?: number;
  /** Consumer settings for `provision()`; per consumer, over the defaults. */
  consumers?: Partial<Record<ConsumerKey, Partial<ConsumerSettings>>>;
  /**
   * `max_age` of streams for `provision()`, ms, over the catalog's (e.g. the events stream's
   * from `system.retention.event_ttl_ms`). Every service that provisions passes the same
   * config, so replicas agree.
   */
  streamMaxAgeMs?: Partial<Record<StreamKey, number>>;
  /** Wait for the server at first connect instead of failing, default false. */
  waitOnFirstConnect?: boolean;
  /** Hooks for metrics: publishes, redeliveries, dead letters. */
  observer?: BusObserver;
}

export const DEFAULT_PREFIX = "tarsy";
export const DEFAULT_CONSUMER_SETTINGS: ConsumerSettings = {
  ackWaitMs: 30_000,
  maxDeliver: 5,
  maxAckPending: 1_000,
};

/**
 * Per-consumer defaults over DEFAULT_CONSUMER_SETTINGS, the same in every process that
 * provisions. The notifier's events are few and cheap to hold: it keeps retrying a handler that
 * fails (Postgres away) for about a quarter of an hour (with the consume backoff's 1 min cap)
 * before a message goes to the dead letters, so an outage does not drop a notification.
 */
const CATALOG_CONSUMER_SETTINGS: Partial<Record<ConsumerKey, Partial<ConsumerSettings>>> = {
  notifier: { maxDeliver: 20 },
};

export function consumerSettings(options: BusOptions, key: ConsumerKey): ConsumerSettings {
  return {
    ...DEFAULT_CONSUMER_SETTINGS,
    ...CATALOG_CONSUMER_SETTINGS[key],
    ...options.consumers?.[key],
  };
}
