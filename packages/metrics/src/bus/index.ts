// `@tarsy/metrics/bus`: the metrics that need the NATS bus. The core (`@tarsy/metrics`) never
// imports `@tarsy/bus`, so a process without NATS (llm-service) does not pull its client in.
export { type BusMetrics, busMetricsObserver, eventKind } from "./observer.ts";
export { natsReadiness } from "./readiness.ts";
export { collectWorkBacklog } from "./work-backlog.ts";
