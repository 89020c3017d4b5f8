import type { AdmitOptions, AlertSession, DbClient } from "../src/index.ts";
import { admitPendingSessions, createSession, transitionSessionStatus } from "../src/index.ts";

let counter = 0;

/** A pending session with recognisable alert data. */
export async function newSession(
  client: DbClient,
  overrides: { alertData?: string; alertType?: string; chainId?: string } = {},
): Promise<AlertSession> {
  counter += 1;
  const { session } = await createSession(client, {
    project: "default",
    alertData: overrides.alertData ?? `alert ${counter}`,
    alertType: overrides.alertType ?? "kubernetes",
    chainId: overrides.chainId ?? "k8s-chain",
    author: "tester",
  });
  return session;
}

/** A session that ran and completed (chat is allowed on it). */
export async function completedSession(client: DbClient): Promise<AlertSession> {
  const session = await newSession(client);
  await transitionSessionStatus(client, session.id, ["pending"], "in_progress");
  await transitionSessionStatus(client, session.id, ["in_progress"], "completed", {
    completedAt: new Date(),
    finalAnalysis: "root cause: OOM",
  });
  return session;
}

/** Admits the single next pending session (by the fairness rule) if a slot is free. */
export async function claimNext(
  client: DbClient,
  options: Omit<AdmitOptions, "limit">,
): Promise<AlertSession | null> {
  const [session] = await admitPendingSessions(client, { ...options, limit: 1 });
  return session ?? null;
}
