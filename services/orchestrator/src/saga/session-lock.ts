import { type AlertSession, type Tx, withSessionLock } from "@tarsy/db";
import type { SagaDeps } from "./deps.ts";
import { deferredMetrics } from "./metrics.ts";

/**
 * Runs `fn` under the session's row lock (one handler per session at a time). `fn` gets the
 * deps to use inside: their metrics are recorded after the transaction commits.
 */
export async function withSession<T>(
  deps: SagaDeps,
  sessionId: string,
  fn: (tx: Tx, session: AlertSession, deps: SagaDeps) => Promise<T>,
): Promise<T> {
  let pending: (() => void)[] = [];
  const result = await withSessionLock(deps.db, sessionId, (tx, session) => {
    pending = [];
    return fn(tx, session, { ...deps, metrics: deferredMetrics(deps.metrics, pending) });
  });
  for (const record of pending) record();
  return result;
}
