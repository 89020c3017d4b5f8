import { withTimeout } from "@tarsy/runtime";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import {
  type LabelOf,
  METRICS,
  type MetricKey,
  type MetricKeyOf,
  type ServiceName,
} from "./catalog.ts";

type TypeOf<K extends MetricKey> = (typeof METRICS)[K]["type"];

/** The prom-client object of one catalog metric, typed by its labels. */
export type MetricOf<K extends MetricKey> =
  TypeOf<K> extends "counter"
    ? Counter<LabelOf<K>>
    : TypeOf<K> extends "gauge"
      ? Gauge<LabelOf<K>>
      : Histogram<LabelOf<K>>;

type GaugeKeyOf<S extends ServiceName> = {
  [K in MetricKeyOf<S>]: TypeOf<K> extends "gauge" ? K : never;
}[MetricKeyOf<S>];

/** Sets a gauge from its source when Prometheus scrapes; throws or times out → value kept. */
export type GaugeCollector<K extends MetricKey> = (gauge: MetricOf<K>) => Promise<void>;

/** Logs what a collector could not read (a pino logger fits). */
export interface CollectLogger {
  warn(fields: object, message: string): void;
}

/** One process's metrics: the catalog's metrics for its service, on its own registry. */
export type ServiceMetrics<S extends ServiceName> = {
  readonly [K in MetricKeyOf<S>]: MetricOf<K>;
} & {
  readonly service: S;
  /** What `/metrics` serves: these metrics plus the process metrics, all labelled `service`. */
  readonly registry: Registry;
  /** Reads a gauge's value at each scrape, waiting at most `timeoutMs` (default 1 s). */
  collectOnScrape<K extends GaugeKeyOf<S>>(
    key: K,
    collect: GaugeCollector<K>,
    options?: { timeoutMs?: number; logger?: CollectLogger },
  ): void;
};

export interface CreateMetricsOptions {
  /** Node.js process metrics (CPU, memory, event loop, GC); default true. Tests turn them off. */
  processMetrics?: boolean;
}

/**
 * Creates the registry of one process: the catalog metrics its service emits, the default
 * process metrics, and the default label `service`. Never touches prom-client's global
 * registry, so tests can create as many as they like.
 */
export function createMetrics<S extends ServiceName>(
  service: S,
  options: CreateMetricsOptions = {},
): ServiceMetrics<S> {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  if (options.processMetrics !== false) collectDefaultMetrics({ register: registry });

  const collectors = new Map<MetricKey, () => Promise<void>>();
  const metrics: Record<string, unknown> = {};
  for (const [key, def] of Object.entries(METRICS) as [MetricKey, (typeof METRICS)[MetricKey]][]) {
    if (!(def.from as readonly ServiceName[]).includes(service)) continue;
    const config = {
      name: def.name,
      help: def.help,
      labelNames: [...def.labels] as string[],
      registers: [registry],
    };
    switch (def.type) {
      case "counter":
        metrics[key] = new Counter(config);
        break;
      case "gauge":
        metrics[key] = new Gauge({ ...config, collect: () => collectors.get(key)?.() });
        break;
      case "histogram":
        metrics[key] = new Histogram({ ...config, buckets: [...def.buckets] });
        break;
      default:
        def satisfies never;
    }
  }

  return {
    ...(metrics as { [K in MetricKeyOf<S>]: MetricOf<K> }),
    service,
    registry,
    collectOnScrape(key, collect, collectOptions = {}) {
      const gauge = metrics[key] as MetricOf<typeof key>;
      const timeoutMs = collectOptions.timeoutMs ?? 1_000;
      collectors.set(key, async () => {
        try {
          await withTimeout(
            collect(gauge),
            timeoutMs,
            () => new Error(`no value in ${timeoutMs} ms`),
          );
        } catch (err) {
          collectOptions.logger?.warn({ err, metric: METRICS[key].name }, "metric not collected");
        }
      });
    },
  };
}
