/**
 * The memory search cases, run on both storage paths: embeddings compared as arrays in SQL
 * (memories.test.ts, on this machine's Postgres) and by pgvector (memories-pgvector.test.ts).
 */

import { expect, type TestAPI } from "vitest";
import type { Db } from "../src/index.ts";
import {
  createMemories,
  type DbClient,
  deprecateMemories,
  type NewMemory,
  searchMemories,
} from "../src/index.ts";
import { completedSession } from "./fixtures.ts";

/** A vitest `test` whose tests get a `db` on a migrated database of their own. */
export type MemoryTest = TestAPI<{ db: Db }>;

export const MODEL = "test-embedding/4";

/** A unit vector in 4 dimensions pointing mostly along `axis`. */
export function along(axis: number, wobble = 0): number[] {
  const v = [0, 0, 0, 0];
  v[axis] = 1;
  v[(axis + 1) % 4] = wobble;
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

export const memory = (content: string, embedding: number[], confidence = 0.7): NewMemory => ({
  content,
  category: "procedural",
  valence: "positive",
  confidence,
  embedding,
  embeddingModel: MODEL,
});

export async function seed(client: DbClient, project = "default") {
  const source = await completedSession(client);
  const scope = { project, sourceSessionId: source.id, alertType: "PodCrash", chainId: "k8s" };
  return { source, scope };
}

export const search = (
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

/** Finding by meaning and by words; projects, deprecation and exclusion; ranking. */
export function memorySearchCases(test: MemoryTest): void {
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
}
