import type { BusAdmin } from "@tarsy/bus";
import { CONSUMERS, type ConsumerKey } from "@tarsy/contracts";
import type { CollectLogger, GaugeCollector } from "../registry.ts";

interface BacklogGauge {
  collectOnScrape(
    key: "workBacklog",
    collect: GaugeCollector<"workBacklog">,
    options?: { timeoutMs?: number; logger?: CollectLogger },
  ): void;
}

/** Sets `tarsy_work_backlog_messages{consumer}` from JetStream's consumer info at each scrape. */
export function collectWorkBacklog(
  metrics: BacklogGauge,
  admin: Pick<BusAdmin, "workBacklog">,
  key: ConsumerKey,
  logger?: CollectLogger,
): void {
  const consumer = CONSUMERS[key].durable;
  metrics.collectOnScrape(
    "workBacklog",
    async (gauge) => gauge.set({ consumer }, await admin.workBacklog(key)),
    logger ? { logger } : {},
  );
}
