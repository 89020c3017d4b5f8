import { MemoryListQuerySchema } from "@tarsy/contracts";
import { describe, expect } from "vitest";
import {
  applyRatingToMemories,
  applyReviewAction,
  createMemories,
  type DbClient,
  deleteMemory,
  deprecateMemories,
  getMemory,
  injectedMemories,
  keywordQuery,
  listMemories,
  type NewMemory,
  recordInjectedMemories,
  reinforceMemories,
  searchMemories,
  sessionMemories,
  updateMemory,
} from "../src/index.ts";
import { completedSession, newSession } from "./fixtures.ts";
import { dbTest as test } from "./support.ts";

const MODEL = "test-embedding/4";

/** A unit vector in 4 dimensions pointing mostly along `axis`. */
function along(axis: number, wobble = 0): number[] {
  const v = [0, 0, 0, 0];
  v[axis] = 1;
  v[(axis + 1) % 4] = wobble;
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

const memory = (content: string, embedding: number[], confidence = 0.7): NewMemory => ({
  content,
  category: "procedural",
  valence: "positive",
  confidence,
  embedding,
  embeddingModel: MODEL,
});

async function seed(client: DbClient, project = "default") {
  const source = await completedSession(client);
  const scope = { project, sourceSessionId: source.id, alertType: "PodCrash", chainId: "k8s" };
  return { source, scope };
}

const search = (
  client: DbClient,
  text: string,
  embedding: number[],
  extra: Partial<Parameters<typeof searchMemories>[1]> = {},
) =>
  searchMemories(client, {
    project: "default",
    text,
    embedding,
    embeddingModel: MODEL,
    limit: 10,
    ...extra,
  });

describe("investigation memories", () => {
  test("finds a memory by meaning with no word in common, and one without an embedding by its words", async ({
    db,
  }) => {
    const p = db.prisma;
    const { scope } = await seed(p);
    const [byMeaning, byWords, unrelated] = await createMemories(p, scope, [
      memory("Check PgBouncer health before blaming the database", along(0)),
      { ...memory("payments-api OOM kills follow the nightly batch", []), embeddingModel: null },
      memory("Certificates of the ingress and the backend expire separately", along(2)),
    ]);
    const found = await search(p, "connection pool exhausted", along(0, 0.1));
    expect(found.map((f) => f.memory.id)).toEqual([byMeaning?.id]);
    expect(found[0]?.similarity).toBeGreaterThan(0.99);

    const keyword = await search(p, "why was payments-api OOM killed?", along(3));
    expect(keyword.map((f) => [f.memory.id, f.similarity])).toEqual([[byWords?.id, null]]);
    // Both at once: the one matching both ways ranks first.
    const both = await search(p, "ingress certificates", along(2, 0.2));
    expect(both.map((f) => f.memory.id)).toEqual([unrelated?.id]);
    // A stored embedding without a model is never compared (keyword only).
    expect(byWords?.embedding).toEqual([]);
    expect(byWords?.embeddingModel).toBeNull();
  });

  test("never crosses projects, skips deprecated and excluded memories, and drops weak similarities", async ({
    db,
  }) => {
    const p = db.prisma;
    const mine = await seed(p, "payments");
    const theirs = await seed(p, "platform");
    const [kept, gone, excluded] = await createMemories(p, mine.scope, [
      memory("restart storms after config rollout", along(1)),
      memory("restart storms are noise on Fridays", along(1, 0.05)),
      memory("restart storms come from the HPA", along(1, 0.1)),
    ]);
    await createMemories(p, theirs.scope, [memory("restart storms in platform", along(1))]);
    expect(await deprecateMemories(p, "payments", [gone?.id ?? "", "not-a-uuid"])).toBe(1);
    // The other project cannot deprecate ours.
    expect(await deprecateMemories(p, "platform", [kept?.id ?? ""])).toBe(0);

    const found = await search(p, "restart storms", along(1), {
      project: "payments",
      excludeIds: [excluded?.id ?? ""],
    });
    expect(found.map((f) => f.memory.id)).toEqual([kept?.id]);

    // Orthogonal vector and no shared word: nothing (better nothing than noise).
    expect(await search(p, "quota", along(3), { project: "payments" })).toEqual([]);
  });

  test("ranks by confidence, recency and the alert type and chain", async ({ db }) => {
    const p = db.prisma;
    const { scope } = await seed(p);
    const [low, high] = await createMemories(p, scope, [
      memory("disk pressure evicts pods", along(0), 0.2),
      memory("disk pressure evicts pods first on node pool b", along(0), 1),
    ]);
    const ranked = await search(p, "disk pressure", along(0));
    expect(ranked.map((f) => f.memory.id)).toEqual([high?.id, low?.id]);

    // An old memory decays below a fresh one of equal confidence.
    await p.$executeRaw`UPDATE investigation_memories SET updated_at = now() - interval '365 days', confidence = 1 WHERE id = ${low?.id}::uuid`;
    await p.$executeRaw`UPDATE investigation_memories SET confidence = 0.5 WHERE id = ${high?.id}::uuid`;
    const decayed = await search(p, "disk pressure", along(0));
    expect(decayed.map((f) => f.memory.id)).toEqual([high?.id, low?.id]);

    // Another alert type's memory loses the boost the same alert type gets.
    const other = await createMemories(p, { ...scope, alertType: "DiskFull", chainId: "disk" }, [
      memory("disk pressure evicts pods", along(0), 0.5),
    ]);
    const boosted = await search(p, "disk pressure", along(0), {
      alertType: "DiskFull",
      chainId: "disk",
    });
    expect(boosted[0]?.memory.id).toBe(other[0]?.id);
    expect((boosted[0]?.score ?? 0) - (boosted[1]?.score ?? 0)).toBeGreaterThan(0.07);
  });

  test("reinforce raises confidence by 1.1 (at most 1), counts the sighting and resets the decay clock", async ({
    db,
  }) => {
    const p = db.prisma;
    const { scope } = await seed(p);
    const [a, b] = await createMemories(p, scope, [
      memory("a", along(0), 0.7),
      memory("b", along(1), 0.95),
    ]);
    await p.$executeRaw`UPDATE investigation_memories SET updated_at = now() - interval '30 days'`;
    const now = new Date();
    expect(await reinforceMemories(p, "default", [a?.id ?? "", b?.id ?? "", "x"], now)).toBe(2);
    const [ra, rb] = await Promise.all([getMemory(p, a?.id ?? ""), getMemory(p, b?.id ?? "")]);
    expect(ra?.confidence).toBeCloseTo(0.77, 6);
    expect(rb?.confidence).toBe(1);
    expect([ra?.seenCount, rb?.seenCount]).toEqual([2, 2]);
    expect(ra?.updatedAt.getTime()).toBe(now.getTime());
    // Another project's ids are not reinforced.
    expect(await reinforceMemories(p, "platform", [a?.id ?? ""])).toBe(0);
  });

  test("a review rating refines the session's memories: accurate ×1.2, partly ×0.6, inaccurate deprecates", async ({
    db,
  }) => {
    const p = db.prisma;
    const sessions = await Promise.all([seed(p), seed(p), seed(p)]);
    const made = await Promise.all(
      sessions.map(({ scope }) => createMemories(p, scope, [memory("m", along(0), 0.8)])),
    );
    await applyRatingToMemories(p, sessions[0]?.source.id ?? "", "accurate");
    await applyRatingToMemories(p, sessions[1]?.source.id ?? "", "partially_accurate");
    await applyRatingToMemories(p, sessions[2]?.source.id ?? "", "inaccurate");
    const after = await Promise.all(made.map(([m]) => getMemory(p, m?.id ?? "")));
    expect(after[0]?.confidence).toBeCloseTo(0.96, 6);
    expect(after[1]?.confidence).toBeCloseTo(0.48, 6);
    expect(after.map((m) => m?.deprecated)).toEqual([false, false, true]);
  });

  test("completing a review with a rating applies it to what the session taught", async ({
    db,
  }) => {
    const p = db.prisma;
    const { source, scope } = await seed(p);
    const [m] = await createMemories(p, scope, [memory("learned", along(0), 0.5)]);
    await p.alertSession.update({
      where: { id: source.id },
      data: { reviewStatus: "needs_review" },
    });
    const result = await applyReviewAction(p, source.id, {
      action: "complete",
      actor: "alice",
      qualityRating: "accurate",
    });
    expect(result.outcome).toBe("applied");
    expect((await getMemory(p, m?.id ?? ""))?.confidence).toBeCloseTo(0.6, 6);
  });

  test("lists with filters and pages within the caller's projects; one, edit, delete", async ({
    db,
  }) => {
    const p = db.prisma;
    const a = await seed(p, "payments");
    const b = await seed(p, "platform");
    const made = await createMemories(p, a.scope, [
      { ...memory("one", along(0)), category: "semantic", valence: "neutral" },
      memory("two", along(1)),
      memory("three", along(2)),
    ]);
    await createMemories(p, b.scope, [memory("theirs", along(0))]);
    const q = (raw: Record<string, string>) => MemoryListQuerySchema.parse(raw);

    const page1 = await listMemories(p, ["payments"], q({ page_size: "2" }));
    expect(page1.total).toBe(3);
    expect(page1.memories.map((m) => m.content)).toEqual(["three", "two"]);
    const page2 = await listMemories(p, ["payments"], q({ page_size: "2", page: "2" }));
    expect(page2.memories.map((m) => m.content)).toEqual(["one"]);
    const semantic = await listMemories(p, ["payments"], q({ category: "semantic" }));
    expect(semantic.memories.map((m) => m.content)).toEqual(["one"]);
    // A project the caller may not see is empty, whether asked for or not.
    expect((await listMemories(p, ["payments"], q({ project: "platform" }))).total).toBe(0);
    expect((await listMemories(p, null, q({}))).total).toBe(4);

    const [first] = made;
    const edited = await updateMemory(p, first?.id ?? "", {
      content: "one, edited",
      deprecated: true,
    });
    expect(edited).toMatchObject({ content: "one, edited", deprecated: true, embedding: [] });
    expect(await updateMemory(p, "00000000-0000-4000-8000-000000000000", { content: "x" })).toBe(
      null,
    );
    expect(await deleteMemory(p, first?.id ?? "")).toBe(true);
    expect(await deleteMemory(p, first?.id ?? "")).toBe(false);
    expect(await getMemory(p, first?.id ?? "")).toBeNull();
  });

  test("records what a session was given (once per memory) and what it taught", async ({ db }) => {
    const p = db.prisma;
    const { source, scope } = await seed(p);
    const later = await newSession(p);
    const made = await createMemories(p, scope, [memory("x", along(0)), memory("y", along(1))]);
    const ids = made.map((m) => m.id);
    await recordInjectedMemories(p, later.id, ids);
    await recordInjectedMemories(p, later.id, ids);
    expect((await injectedMemories(p, later.id)).map((m) => m.id).sort()).toEqual([...ids].sort());
    expect((await sessionMemories(p, source.id)).map((m) => m.content)).toEqual(["x", "y"]);
    expect(await sessionMemories(p, later.id)).toEqual([]);
  });

  test("turns free text into an OR query of its words", () => {
    expect(keywordQuery("Why is payments-api OOM? (again) a")).toBe(
      "'why' | 'is' | 'payments' | 'api' | 'oom' | 'again'",
    );
    expect(keywordQuery("?!")).toBe("");
  });
});
