// Exposed for benchmarks and the whole-system tests; services never import each other.
export { busEventLog } from "./bus-event-log.ts";
export type { EventLog, StoredEvent } from "./event-log.ts";
export { type Relay, type RelayOptions, startRelay, WS_PATH } from "./server.ts";
