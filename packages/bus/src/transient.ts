import type { NatsConnection } from "@nats-io/transport-node";
import { MESSAGES, type PayloadOf, type TransientMessageKey } from "@tarsy/contracts";
import type { Logger } from "@tarsy/runtime";
import type { Naming } from "./naming.ts";
import { formatIssues } from "./publish.ts";

export type TransientHandler<K extends TransientMessageKey> = (
  payload: PayloadOf<K>,
  meta: { subject: string },
) => void | Promise<void>;

export interface TransientSubscription {
  unsubscribe(): void;
}

/**
 * Listens on core NATS to `subject` (relative, wildcards allowed) for messages of kind `key`.
 * Messages that are not valid `key` payloads are logged and dropped.
 */
export function subscribeCore<K extends TransientMessageKey>(
  nc: NatsConnection,
  naming: Naming,
  logger: Logger,
  key: K,
  subject: string,
  handler: TransientHandler<K>,
): TransientSubscription {
  const schema = MESSAGES[key].schema;
  const log = logger.child({ component: "bus.transient", message: key });
  const sub = nc.subscribe(naming.subject(subject), {
    callback: (err, msg) => {
      if (err) {
        log.warn({ err }, "subscription error");
        return;
      }
      const relative = naming.relative(msg.subject) ?? msg.subject;
      let json: unknown;
      try {
        json = msg.json();
      } catch {
        log.warn({ subject: relative }, "dropping a transient message that is not JSON");
        return;
      }
      const parsed = schema.safeParse(json);
      if (!parsed.success) {
        const issues = formatIssues(parsed.error);
        log.warn({ subject: relative, issues }, "dropping an invalid transient message");
        return;
      }
      Promise.resolve()
        .then(() => handler(parsed.data as PayloadOf<K>, { subject: relative }))
        .catch((handlerErr: unknown) => {
          log.error({ err: handlerErr, subject: relative }, "transient handler failed");
        });
    },
  });
  return { unsubscribe: () => sub.unsubscribe() };
}
