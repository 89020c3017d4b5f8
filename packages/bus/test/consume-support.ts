import { jetstreamManager } from "@nats-io/jetstream";
import { CONSUMERS, type ConsumerKey } from "@tarsy/contracts";
import { afterEach } from "vitest";
import type { WorkConsumer } from "../src/index.ts";
import { eventually, type Harness, harness } from "./support.ts";

/**
 * What the consume tests share: a harness per test and the consumers they start, both
 * cleaned up after each test (`useConsumeRig()` registers that in the calling file).
 */
export function useConsumeRig() {
  const open: Harness[] = [];
  const workers: WorkConsumer[] = [];
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.stop();
    for (const h of open.splice(0)) await h.cleanup();
  });
  return {
    workers,
    async fresh(...args: Parameters<typeof harness>): Promise<Harness> {
      const h = await harness(...args);
      open.push(h);
      return h;
    },
  };
}

export const FAST = { fetchExpiresMs: 1_000, stopTimeoutMs: 2_000 };

/** The dead letters, once there are any. */
export function deadLetters(h: Harness, what = "a dead letter") {
  return eventually(
    async () => {
      const p = await h.admin.listDeadLetters();
      return p.items.length > 0 ? p.items : undefined;
    },
    10_000,
    what,
  );
}

/**
 * The server's own count of what a durable consumer handed out: every delivery, redeliveries
 * included, takes a consumer sequence; `pending` is what is stored and not yet delivered,
 * `unacked` what is delivered and waiting for an ack (and so could be redelivered).
 */
export async function deliveryState(h: Harness, key: ConsumerKey) {
  const jsm = await jetstreamManager(h.raw);
  const info = await jsm.consumers.info(`TARSY_WORK${h.streamSuffix}`, CONSUMERS[key].durable);
  return {
    deliveries: info.delivered.consumer_seq,
    pending: info.num_pending,
    unacked: info.num_ack_pending,
  };
}
