import {
  AckPolicy,
  type ConsumerConfig,
  DeliverPolicy,
  DiscardPolicy,
  JetStreamApiError,
  type JetStreamManager,
  ReplayPolicy,
  RetentionPolicy,
  StorageType,
  type StreamConfig,
} from "@nats-io/jetstream";
import { CONSUMERS, type ConsumerKey, STREAMS, type StreamKey } from "@tarsy/contracts";
import type { Logger } from "@tarsy/runtime";
import { BusProvisionError } from "./errors.ts";
import type { Naming } from "./naming.ts";
import { type BusOptions, consumerSettings } from "./options.ts";

const NS_PER_MS = 1_000_000;
/** JetStream API error codes for a create that lost a race with another replica. */
const ALREADY_EXISTS_CODES = new Set([10058, 10013, 10148]);
/**
 * "Subjects overlap with an existing stream": also what a stream's create gets when another
 * replica created the same stream a moment before. Looked at again: when the stream of this
 * name now exists it was that race, otherwise the overlap is real and is reported.
 */
const SUBJECTS_OVERLAP = 10065;

export interface ProvisionReport {
  streams: Record<string, "created" | "updated" | "unchanged">;
  consumers: Record<string, "created" | "updated" | "unchanged">;
}

type DesiredStream = Pick<
  StreamConfig,
  | "name"
  | "subjects"
  | "retention"
  | "storage"
  | "num_replicas"
  | "duplicate_window"
  | "max_age"
  | "discard"
>;

type DesiredConsumer = Pick<
  ConsumerConfig,
  | "durable_name"
  | "ack_policy"
  | "ack_wait"
  | "max_deliver"
  | "max_ack_pending"
  | "filter_subject"
  | "deliver_policy"
  | "replay_policy"
>;

/** The stream as the catalog declares it; `maxAgeMs` (ms) overrides the catalog's max age. */
export function desiredStream(
  naming: Naming,
  key: StreamKey,
  replicas: number,
  maxAgeMs?: number,
): DesiredStream {
  const def = STREAMS[key];
  return {
    name: naming.stream(key),
    subjects: def.subjects.map((s) => naming.subject(s)),
    retention: def.retention === "workqueue" ? RetentionPolicy.Workqueue : RetentionPolicy.Limits,
    storage: StorageType.File,
    num_replicas: replicas,
    duplicate_window: def.duplicateWindowMs * NS_PER_MS,
    max_age: (maxAgeMs ?? def.maxAgeMs) * NS_PER_MS,
    discard: DiscardPolicy.Old,
  };
}

/**
 * The server keeps one delivery more than `maxDeliver`: a message whose last attempt died
 * with its process (no ack, no nak) comes back once more and goes straight to the dead
 * letters instead of staying stuck in the work queue.
 */
export function desiredConsumer(
  naming: Naming,
  options: BusOptions,
  key: ConsumerKey,
): DesiredConsumer {
  const def = CONSUMERS[key];
  const settings = consumerSettings(options, key);
  return {
    durable_name: def.durable,
    ack_policy: AckPolicy.Explicit,
    ack_wait: settings.ackWaitMs * NS_PER_MS,
    max_deliver: settings.maxDeliver + 1,
    max_ack_pending: settings.maxAckPending,
    filter_subject: naming.subject(def.filterSubject),
    deliver_policy:
      "deliverFrom" in def && def.deliverFrom === "new" ? DeliverPolicy.New : DeliverPolicy.All,
    replay_policy: ReplayPolicy.Instant,
  };
}

/** Fields of `desired` whose value differs in `actual`. */
function differences(desired: object, actual: object): string[] {
  const have = actual as Record<string, unknown>;
  return Object.entries(desired)
    .filter(([field, want]) => JSON.stringify(have[field]) !== JSON.stringify(want))
    .map(([field]) => field);
}

const isNotFound = (err: unknown) =>
  err instanceof JetStreamApiError && (err.code === 10059 || err.code === 10014);
const isAlreadyExists = (err: unknown) =>
  err instanceof JetStreamApiError && ALREADY_EXISTS_CODES.has(err.code);
const isStreamRace = (err: unknown) =>
  isAlreadyExists(err) || (err instanceof JetStreamApiError && err.code === SUBJECTS_OVERLAP);

async function ensureStream(
  jsm: JetStreamManager,
  desired: DesiredStream,
  logger: Logger,
): Promise<"created" | "updated" | "unchanged"> {
  for (let attempt = 0; ; attempt++) {
    try {
      const info = await jsm.streams.info(desired.name).catch((err: unknown) => {
        if (isNotFound(err)) return undefined;
        throw err;
      });
      if (!info) {
        await jsm.streams.add(desired);
        logger.info({ stream: desired.name }, "stream created");
        return "created";
      }
      const changed = differences(desired, info.config);
      if (changed.length === 0) return "unchanged";
      await jsm.streams.update(desired.name, { ...info.config, ...desired });
      logger.info({ stream: desired.name, changed }, "stream updated");
      return "updated";
    } catch (err) {
      // Another replica created it between our info and add: look again.
      if (isStreamRace(err) && attempt < 3) continue;
      throw new BusProvisionError(`stream ${desired.name}`, { cause: err });
    }
  }
}

async function ensureConsumer(
  jsm: JetStreamManager,
  stream: string,
  desired: DesiredConsumer,
  logger: Logger,
): Promise<"created" | "updated" | "unchanged"> {
  const name = desired.durable_name ?? "";
  for (let attempt = 0; ; attempt++) {
    try {
      const info = await jsm.consumers.info(stream, name).catch((err: unknown) => {
        if (isNotFound(err)) return undefined;
        throw err;
      });
      if (!info) {
        await jsm.consumers.add(stream, desired);
        logger.info({ stream, consumer: name }, "consumer created");
        return "created";
      }
      const changed = differences(desired, info.config);
      if (changed.length === 0) return "unchanged";
      const { ack_wait, max_deliver, max_ack_pending, filter_subject } = desired;
      await jsm.consumers.update(stream, name, {
        ack_wait,
        max_deliver,
        max_ack_pending,
        ...(filter_subject ? { filter_subject } : {}),
      });
      logger.info({ stream, consumer: name, changed }, "consumer updated");
      return "updated";
    } catch (err) {
      if (isAlreadyExists(err) && attempt < 3) continue;
      throw new BusProvisionError(`consumer ${stream}/${name}`, { cause: err });
    }
  }
}

/**
 * Creates or updates every stream and durable consumer of the catalog. Idempotent, and safe
 * when several replicas run it at once (a lost creation race is retried as an update).
 */
export async function provisionAll(
  jsm: JetStreamManager,
  naming: Naming,
  options: BusOptions,
  logger: Logger,
): Promise<ProvisionReport> {
  const report: ProvisionReport = { streams: {}, consumers: {} };
  const replicas = options.replicas ?? 1;
  for (const key of Object.keys(STREAMS) as StreamKey[]) {
    const desired = desiredStream(naming, key, replicas, options.streamMaxAgeMs?.[key]);
    report.streams[desired.name] = await ensureStream(jsm, desired, logger);
  }
  for (const key of Object.keys(CONSUMERS) as ConsumerKey[]) {
    const stream = naming.stream(CONSUMERS[key].stream);
    const desired = desiredConsumer(naming, options, key);
    report.consumers[`${stream}/${desired.durable_name}`] = await ensureConsumer(
      jsm,
      stream,
      desired,
      logger,
    );
  }
  return report;
}

/** Deletes the streams of the catalog (and their consumers); returns the deleted names. */
export async function deprovisionAll(jsm: JetStreamManager, naming: Naming): Promise<string[]> {
  const deleted: string[] = [];
  for (const key of Object.keys(STREAMS) as StreamKey[]) {
    const name = naming.stream(key);
    const ok = await jsm.streams.delete(name).catch((err: unknown) => {
      if (isNotFound(err)) return false;
      throw err;
    });
    if (ok) deleted.push(name);
  }
  return deleted;
}
