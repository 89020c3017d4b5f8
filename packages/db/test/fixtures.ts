import type { AlertSession, DbClient } from "../src/index.ts";
import { createSession, transitionSessionStatus } from "../src/index.ts";

let counter = 0;

/** A pending session with recognisable alert data. */
export async function newSession(
  client: DbClient,
  overrides: { alertData?: string; alertType?: string; chainId?: string } = {},
): Promise<AlertSession> {
  counter += 1;
  const { session } = await createSession(client, {
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
