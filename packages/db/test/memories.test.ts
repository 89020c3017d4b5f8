import { MemoryListQuerySchema } from "@tarsy/contracts";
import { describe, expect } from "vitest";
import {
  applyRatingToMemories,
  applyReviewAction,
  createMemories,
  deleteMemory,
  ensureMemoryVectorIndexes,
  getMemory,
  injectedMemories,
  keywordQuery,
  listMemories,
  pgvectorVersion,
  recordInjectedMemories,
  reinforceMemories,
  sessionMemories,
  updateMemory,
} from "../src/index.ts";
import { newSession } from "./fixtures.ts";
import { along, memory, memorySearchCases, seed } from "./memory-search-cases.ts";
import { dbTest as test } from "./support.ts";

describe("investigation memories", () => {
  memorySearchCases(test);

  test("without pgvector (Debian's Postgres here) the migrations apply and embeddings stay arrays", async ({
    db,
  }) => {
    const p = db.prisma;
    expect(await pgvectorVersion(p)).toBeNull();
    const { scope } = await seed(p);
    await createMemories(p, scope, [memory("a", along(0))]);
    expect(await ensureMemoryVectorIndexes(p)).toEqual([]);
    const indexes = await p.$queryRaw<{ n: bigint }[]>`
      SELECT count(*) AS n FROM pg_indexes WHERE indexname LIKE '%hnsw%'`;
    expect(indexes[0]?.n).toBe(0n);
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
