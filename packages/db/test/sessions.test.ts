import { describe, expect } from "vitest";
import {
  admitPendingSessions,
  countRunningSessions,
  createSession,
  getSession,
  listSessions,
  SessionNotFoundError,
  softDeleteSession,
  transitionSessionStatus,
  withSessionLock,
} from "../src/index.ts";
import { claimNext, newSession } from "./fixtures.ts";
import { dbTest as test } from "./support.ts";

describe("sessions", () => {
  test("a new session is pending and its submitted message is committed with it", async ({
    db,
  }) => {
    const { session, submitted } = await createSession(db.prisma, {
      project: "default",
      alertData: "pod crashloop in ns payments",
      alertType: "kubernetes",
      chainId: "k8s-chain",
      mcpSelection: { servers: [{ name: "kubernetes-server" }] },
      alertFingerprint: "fp-1",
      alertLabels: { severity: "critical" },
    });
    expect(session.status).toBe("pending");
    expect(session.timelineSequence).toBe(0);
    expect(submitted.key).toBe("sessionSubmitted");
    expect(submitted.msgId).toBe(`session-submitted.${session.id}`);
    expect(submitted.payload).toMatchObject({
      v: 1,
      session_id: session.id,
      chain_id: "k8s-chain",
    });
    const outbox = await db.prisma.outboxMessage.findMany();
    expect(outbox.map((o) => [o.messageKey, o.msgId, o.publishedAt])).toEqual([
      ["sessionSubmitted", submitted.msgId, null],
    ]);
  });

  test("a failed creation leaves neither a session nor a message", async ({ db }) => {
    await expect(
      db.prisma.$transaction(async (tx) => {
        await createSession(tx, {
          alertData: "x",
          alertType: "k",
          chainId: "c",
          project: "default",
        });
        throw new Error("request aborted");
      }),
    ).rejects.toThrow("request aborted");
    expect(await db.prisma.alertSession.count()).toBe(0);
    expect(await db.prisma.outboxMessage.count()).toBe(0);
  });

  test("status transitions apply only from the expected statuses", async ({ db }) => {
    const session = await newSession(db.prisma);
    expect(await transitionSessionStatus(db.prisma, session.id, ["in_progress"], "completed")).toBe(
      false,
    );
    expect(await transitionSessionStatus(db.prisma, session.id, ["pending"], "in_progress")).toBe(
      true,
    );
    // A redelivered "admit" loses: the session is no longer pending.
    expect(await transitionSessionStatus(db.prisma, session.id, ["pending"], "in_progress")).toBe(
      false,
    );
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        transitionSessionStatus(
          db.prisma,
          session.id,
          ["in_progress"],
          i % 2 ? "failed" : "completed",
          {
            errorMessage: `writer ${i}`,
          },
        ),
      ),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    const after = await getSession(db.prisma, session.id);
    const winner = results.indexOf(true);
    expect(after?.status).toBe(winner % 2 ? "failed" : "completed");
    expect(after?.errorMessage).toBe(`writer ${winner}`);
  });

  test("soft-deleted sessions disappear from lookups, lists and transitions", async ({ db }) => {
    const kept = await newSession(db.prisma, { alertData: "keep me" });
    const gone = await newSession(db.prisma, { alertData: "delete me" });
    expect(await softDeleteSession(db.prisma, gone.id)).toBe(true);
    expect(await softDeleteSession(db.prisma, gone.id)).toBe(false);
    expect(await getSession(db.prisma, gone.id)).toBeNull();
    expect((await listSessions(db.prisma)).items.map((s) => s.id)).toEqual([kept.id]);
    expect(await transitionSessionStatus(db.prisma, gone.id, ["pending"], "in_progress")).toBe(
      false,
    );
    await expect(withSessionLock(db.prisma, gone.id, async () => 1)).rejects.toBeInstanceOf(
      SessionNotFoundError,
    );
    // The row is still there for audit.
    expect(await db.prisma.alertSession.count()).toBe(2);
  });

  test("lists filter by status, type, chain, time and free text, newest first", async ({ db }) => {
    const a = await newSession(db.prisma, { alertData: "Namespace payments is Terminating" });
    const b = await newSession(db.prisma, { alertType: "prometheus", chainId: "prom" });
    const c = await newSession(db.prisma, { alertData: "disk full on node-7" });
    await transitionSessionStatus(db.prisma, c.id, ["pending"], "completed", {
      finalAnalysis: "The namespace finalizer was stuck",
    });
    const ids = async (filter: Parameters<typeof listSessions>[1]) =>
      (await listSessions(db.prisma, filter)).items.map((s) => s.id);

    expect(await ids({})).toEqual([c.id, b.id, a.id]);
    expect(await ids({ status: ["completed"] })).toEqual([c.id]);
    expect(await ids({ alertType: "prometheus" })).toEqual([b.id]);
    expect(await ids({ chainId: "k8s-chain" })).toEqual([c.id, a.id]);
    // Case-insensitive, over alert data and analyses.
    expect(await ids({ search: "NAMESPACE" })).toEqual([c.id, a.id]);
    expect(await ids({ search: "node-7", status: ["pending"] })).toEqual([]);
    expect(await ids({ createdFrom: b.createdAt, createdTo: b.createdAt })).toEqual([b.id]);
    expect(await ids({ sortBy: "createdAt", sortOrder: "asc" })).toEqual([a.id, b.id, c.id]);
    // Sessions not yet completed sort last either way, newest first among themselves.
    expect(await ids({ sortBy: "completedAt", sortOrder: "asc" })).toEqual([c.id, b.id, a.id]);
    expect(await ids({ sortBy: "alertType", sortOrder: "desc" })).toEqual([b.id, c.id, a.id]);
    const page = await listSessions(db.prisma, { page: 2, pageSize: 2 });
    expect(page.items.map((s) => s.id)).toEqual([a.id]);
    expect(page.total).toBe(3);
  });

  test("withSessionLock hands the handler the session exactly as stored", async ({ db }) => {
    const { session } = await createSession(db.prisma, {
      project: "default",
      alertData: "a",
      alertType: "kubernetes",
      chainId: "k8s",
      agentType: "KubernetesAgent",
      runbookUrl: "https://runbooks.example/oom",
      mcpSelection: { servers: [{ name: "kubernetes-server", tools: ["pods_list"] }] },
      deadlineAt: new Date("2030-01-01T00:00:00.123Z"),
      alertFingerprint: "fp",
      alertLabels: { severity: "critical" },
    });
    await transitionSessionStatus(db.prisma, session.id, ["pending"], "in_progress", {
      podId: "pod-1",
      startedAt: new Date(),
      currentStageIndex: 1,
      currentStageName: "investigate",
    });
    const stored = await db.prisma.alertSession.findUniqueOrThrow({ where: { id: session.id } });
    const seen = await withSessionLock(db.prisma, session.id, async (_tx, locked) => locked);
    expect(seen).toEqual(stored);
    expect(Object.keys(seen).sort()).toEqual(Object.keys(stored).sort());
  });

  test("withSessionLock serializes one session's handlers", async ({ db }) => {
    const session = await newSession(db.prisma);
    const log: string[] = [];
    const handler = (name: string) =>
      withSessionLock(db.prisma, session.id, async (tx, locked) => {
        log.push(`${name}:start:${locked.status}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
        if (locked.status === "pending") {
          await transitionSessionStatus(tx, session.id, ["pending"], "in_progress");
        }
        log.push(`${name}:end`);
      });
    await Promise.all([handler("a"), handler("b"), handler("c")]);
    // Never interleaved, and each handler saw what the previous one committed.
    for (let i = 0; i < log.length; i += 2) {
      expect(log[i + 1]).toBe(`${log[i]?.split(":")[0]}:end`);
    }
    expect(log.filter((l) => l.endsWith(":start:pending"))).toHaveLength(1);
    expect(log.filter((l) => l.endsWith(":start:in_progress"))).toHaveLength(2);
  });

  test("admission takes pending sessions oldest first and never exceeds the cap", async ({
    db,
  }) => {
    const created = [];
    for (let i = 0; i < 12; i++) created.push(await newSession(db.prisma));
    // Six orchestrator replicas admit at once with a cap of 5.
    const batches = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        admitPendingSessions(db.prisma, { podId: `pod-${i}`, maxConcurrent: 5 }),
      ),
    );
    const admitted = batches.flat();
    expect(admitted).toHaveLength(5);
    expect(new Set(admitted.map((s) => s.id)).size).toBe(5);
    expect(admitted.map((s) => s.id).sort()).toEqual(
      created
        .slice(0, 5)
        .map((s) => s.id)
        .sort(),
    );
    expect(admitted.every((s) => s.status === "in_progress" && s.startedAt !== null)).toBe(true);
    expect(await countRunningSessions(db.prisma)).toBe(5);
    expect(await claimNext(db.prisma, { podId: "x", maxConcurrent: 5 })).toBeNull();

    // A slot frees up: exactly the next oldest is admitted.
    await transitionSessionStatus(db.prisma, created[2]!.id, ["in_progress"], "completed");
    const next = await claimNext(db.prisma, { podId: "x", maxConcurrent: 5 });
    expect(next?.id).toBe(created[5]!.id);
    expect(next?.podId).toBe("x");
  });

  test("concurrent claims without a cap never take the same session twice", async ({ db }) => {
    for (let i = 0; i < 20; i++) await newSession(db.prisma);
    const claims = await Promise.all(
      Array.from({ length: 25 }, (_, i) => claimNext(db.prisma, { podId: `p${i}` })),
    );
    const ids = claims.filter((s) => s !== null).map((s) => s.id);
    expect(ids).toHaveLength(20);
    expect(new Set(ids).size).toBe(20);
  });

  test("a claim skips a pending session locked by another handler", async ({ db }) => {
    const first = await newSession(db.prisma);
    const second = await newSession(db.prisma);
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const holder = withSessionLock(db.prisma, first.id, async () => {
      locked();
      await held;
    });
    await isLocked;
    const claimed = await claimNext(db.prisma, { podId: "p" });
    release();
    await holder;
    expect(claimed?.id).toBe(second.id);
  });
});
