import type { JetStreamClient, JetStreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "@tarsy/runtime";
import { BusInvalidOptionsError, BusNotConnectedError } from "./errors.ts";
import type { Naming } from "./naming.ts";
import type { BusObserver } from "./observer.ts";
import type { BusOptions } from "./options.ts";

/**
 * What a bus is made of. Only modules of this package reach it (`coreOf`): services get the
 * typed `Bus` and `BusAdmin`, never the raw connection.
 */
export interface BusCore {
  readonly connection: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly naming: Naming;
  readonly options: BusOptions;
  readonly logger: Logger;
  readonly observer: BusObserver;
}

const cores = new WeakMap<object, BusCore>();

export function registerCore(bus: object, core: BusCore): void {
  cores.set(bus, core);
}

/** The core of a bus made by `connectBus`. */
export function coreOf(bus: object): BusCore {
  const core = cores.get(bus);
  if (!core) throw new BusInvalidOptionsError("not a bus made by connectBus()");
  return core;
}

/** Throws BusNotConnectedError once the connection is closed (it never reopens). */
export function ensureOpen(core: Pick<BusCore, "connection">): void {
  if (core.connection.isClosed()) throw new BusNotConnectedError("the bus connection is closed");
}
