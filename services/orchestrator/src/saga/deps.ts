import type { Bus } from "@tarsy/bus";
import type { TarsyConfig } from "@tarsy/config";
import type { PrismaClient } from "@tarsy/db";
import type { Logger } from "@tarsy/runtime";
import type { SagaMetrics } from "./metrics.ts";

/** What every saga step needs; built once in main.ts. */
export interface SagaDeps {
  db: PrismaClient;
  bus: Bus;
  config: TarsyConfig;
  logger: Logger;
  /** This replica's id, recorded on the sessions it admits. */
  podId: string;
  /** Publishes what the committed transactions put in the outbox (a relay pass, now). */
  flushOutbox(): Promise<void>;
  now(): Date;
  /** Session and stage outcomes; inside `withSession`, recorded once the transaction commits. */
  metrics: SagaMetrics;
}
