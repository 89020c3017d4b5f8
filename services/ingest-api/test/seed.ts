import {
  createSession,
  createTimelineEvent,
  type DbClient,
  ensureStage,
  softDeleteSession,
  transitionSessionStatus,
} from "@tarsy/db";

/** Rows another service would write, seeded through packages/db's own functions. */

export async function seedSession(
  db: DbClient,
  input: {
    alertType?: string;
    chainId?: string;
    data?: string;
    author?: string;
    project?: string;
  } = {},
) {
  const { session } = await createSession(db, {
    project: input.project ?? "default",
    alertData: input.data ?? "seeded alert",
    alertType: input.alertType ?? "kubernetes",
    chainId: input.chainId ?? "kubernetes-agent-chain",
    author: input.author ?? "seed",
  });
  return session;
}

export async function startSession(db: DbClient, id: string) {
  await transitionSessionStatus(db, id, ["pending"], "in_progress", { startedAt: new Date() });
}

export async function finishSession(
  db: DbClient,
  id: string,
  status: "completed" | "failed" | "timed_out" | "cancelled" = "completed",
  set: {
    finalAnalysis?: string;
    executiveSummary?: string;
    cancelledBy?: string;
    cancelReason?: string;
  } = {},
) {
  await transitionSessionStatus(db, id, ["pending"], "in_progress", { startedAt: new Date() });
  await transitionSessionStatus(db, id, ["in_progress"], status, {
    completedAt: new Date(),
    ...set,
  });
}

/** A completed session with one stage, one execution and a few timeline events. */
export async function seedInvestigation(db: DbClient) {
  const session = await seedSession(db, { data: "pod api-1 OOMKilled" });
  const { stage, executions } = await ensureStage(
    db,
    { sessionId: session.id, stageName: "investigate", stageIndex: 1 },
    [
      {
        agentName: "KubernetesAgent",
        agentIndex: 1,
        backend: "google-native",
        llmProvider: "gemini",
      },
    ],
  );
  const execution = executions[0];
  if (!execution) throw new Error("no execution");
  const ref = { sessionId: session.id, stageId: stage.id, executionId: execution.id };
  const events = [];
  for (const [eventType, content] of [
    ["llm_thinking", "Looking at the pod"],
    ["llm_tool_call", "pods_list"],
    ["final_analysis", "The pod ran out of memory."],
  ] as const) {
    events.push(await createTimelineEvent(db, { ...ref, eventType, status: "completed", content }));
  }
  await createTimelineEvent(db, {
    sessionId: session.id,
    eventType: "executive_summary",
    status: "completed",
    content: "OOM in api-1",
  });
  await finishSession(db, session.id, "completed", {
    finalAnalysis: "The pod ran out of memory.",
    executiveSummary: "OOM in api-1",
  });
  return { session, stage, execution, ref, events };
}

export { softDeleteSession };
