import { CONSUMERS, type ConsumerKey } from "@tarsy/contracts";
import type { Bus } from "./bus.ts";
import { type BusCore, coreOf, ensureOpen } from "./core.ts";
import {
  type DeadLetterPage,
  discardDeadLetter,
  listDeadLetters,
  redriveDeadLetter,
} from "./dead-letters.ts";
import { lastEventSequence } from "./events.ts";
import { deprovisionAll, type ProvisionReport, provisionAll } from "./provision.ts";
import type { PublishResult } from "./publish.ts";

/**
 * Managing what the bus runs on, apart from publishing and consuming (nats.js's
 * `jetstreamManager` beside `jetstream`): streams and consumers, dead letters, backlogs and
 * stream sequences. Made from a connected bus with `createBusAdmin(bus)`; it shares that
 * bus's connection and closes with it.
 */
export interface BusAdmin {
  /** Creates or updates every stream and durable consumer of the catalog (idempotent). */
  provision(): Promise<ProvisionReport>;
  /**
   * Deletes the bus's streams (and with them their consumers and messages). For tests and
   * for tearing down a tenant; services never call it. Returns the deleted stream names.
   */
  deprovision(): Promise<string[]>;

  /** Messages of a work consumer not yet acknowledged: waiting plus being worked on. */
  workBacklog(key: ConsumerKey): Promise<number>;
  /** Newest stream sequence of a subject of the events stream, 0 when it has none. */
  lastSequence(subject: string): Promise<number>;

  listDeadLetters(options?: { afterSeq?: number; limit?: number }): Promise<DeadLetterPage>;
  /** Publishes a dead letter's original body again, then removes the letter. */
  redriveDeadLetter(seq: number): Promise<PublishResult>;
  discardDeadLetter(seq: number): Promise<void>;
}

class NatsBusAdmin implements BusAdmin {
  constructor(private readonly core: BusCore) {}

  private open(): BusCore {
    ensureOpen(this.core);
    return this.core;
  }

  provision(): Promise<ProvisionReport> {
    const { jsm, naming, options, logger } = this.open();
    return provisionAll(jsm, naming, options, logger);
  }

  deprovision(): Promise<string[]> {
    const { jsm, naming } = this.open();
    return deprovisionAll(jsm, naming);
  }

  async workBacklog(key: ConsumerKey): Promise<number> {
    const { jsm, naming } = this.open();
    const def = CONSUMERS[key];
    const info = await jsm.consumers.info(naming.stream(def.stream), def.durable);
    return info.num_pending + info.num_ack_pending;
  }

  lastSequence(subject: string): Promise<number> {
    return lastEventSequence(this.open(), subject);
  }

  listDeadLetters(options?: { afterSeq?: number; limit?: number }): Promise<DeadLetterPage> {
    return listDeadLetters(this.open(), options);
  }

  redriveDeadLetter(seq: number): Promise<PublishResult> {
    return redriveDeadLetter(this.open(), seq);
  }

  discardDeadLetter(seq: number): Promise<void> {
    return discardDeadLetter(this.open(), seq);
  }
}

/** The admin side of a bus made by `connectBus` (no second connection). */
export function createBusAdmin(bus: Bus): BusAdmin {
  return new NatsBusAdmin(coreOf(bus));
}
