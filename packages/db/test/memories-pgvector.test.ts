/**
 * Investigation memory on a server with pgvector (PGlite with its pgvector extension: see
 * @tarsy/testkit's pgvector.ts). The same search cases as on this machine's Postgres, plus
 * what only pgvector does: an HNSW index per dimension, and ranking over all of a project's
 * memories rather than its newest.
 */

import { afterAll, test as base, beforeAll, describe, expect } from "vitest";
import { type PgvectorPostgres, startPgvectorPostgres } from "../../testkit/src/pgvector.ts";
import {
  createDb,
  createMemories,
  type Db,
  ensureMemoryVectorIndexes,
  memoryVectorIndexName,
  pgvectorVersion,
  searchMemories,
} from "../src/index.ts";
import { along, memory, memorySearchCases, seed } from "./memory-search-cases.ts";

let server: PgvectorPostgres;
let shared: Db;

beforeAll(async () => {
  server = await startPgvectorPostgres();
  shared = createDb({ url: server.url, poolSize: 4 });
}, 120_000);

afterAll(async () => {
  await shared?.close();
  await server?.stop();
});

/** One database for the file (PGlite has one backend), emptied before each test. */
const test = base.extend<{ db: Db }>({
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads fixture dependencies from this pattern
  db: async ({}, use) => {
    await server.resetTables();
    await use(shared);
  },
});

describe("investigation memories with pgvector", () => {
  test("the migrations created the extension", async ({ db }) => {
    expect(await pgvectorVersion(db.prisma)).toMatch(/^0\.\d+\.\d+$/);
  });

  memorySearchCases(test);

  test("an HNSW index per stored dimension, made once, even by several callers at once", async ({
    db,
  }) => {
    const p = db.prisma;
    const { scope } = await seed(p);
    const eight = (axis: number): number[] => [...along(axis), 0, 0, 0, 0];
    await createMemories(p, scope, [
      memory("four", along(0)),
      { ...memory("eight", eight(1)), embeddingModel: "test-embedding/8" },
      { ...memory("none", []), embeddingModel: null },
    ]);
    const made = await Promise.all([ensureMemoryVectorIndexes(p), ensureMemoryVectorIndexes(p)]);
    expect(made.flat().sort()).toEqual([4, 8]);
    expect(await ensureMemoryVectorIndexes(p)).toEqual([]);
    const indexes = await p.$queryRaw<{ name: string; def: string }[]>`
      SELECT indexname AS name, indexdef AS def FROM pg_indexes
       WHERE indexname LIKE 'investigation_memories_embedding_hnsw%' ORDER BY 1`;
    expect(indexes.map((i) => i.name)).toEqual([
      memoryVectorIndexName(4),
      memoryVectorIndexName(8),
    ]);
    expect(indexes[0]?.def).toMatch(
      /USING hnsw .*vector_cosine_ops.*WHERE \(cardinality\(embedding\) = 4\)/,
    );

    // Each dimension is searched on its own: an 8-dimension query finds the 8-dimension memory.
    const found = await searchMemories(p, {
      project: "default",
      text: "",
      embedding: eight(1),
      embeddingModel: "test-embedding/8",
      limit: 5,
    });
    expect(found.map((f) => f.memory.content)).toEqual(["eight"]);
    expect(found[0]?.similarity).toBeCloseTo(1, 5);
  });

  test("ranks all of a project's memories, where arrays compare only its newest 2,000", async ({
    db,
  }) => {
    const p = db.prisma;
    const { scope } = await seed(p);
    // Eight dimensions, like an embedding model's (smaller): the lesson points one way…
    const lesson = [0.9, -0.3, 0.1, 0.2, -0.1, 0.05, 0.1, -0.2];
    const [oldest] = await createMemories(p, scope, [
      { ...memory("the quota lesson", lesson), embeddingModel: "test-embedding/8" },
    ]);
    // A minute older than the rest (barely decayed, but outside the newest 2,000)…
    await p.$executeRaw`UPDATE investigation_memories SET updated_at = now() - interval '1 minute'`;
    // …and 2,100 newer memories about other things point every other way.
    await p.$executeRaw`
      INSERT INTO investigation_memories (project, content, category, valence, embedding, embedding_model)
      SELECT 'default', 'filler ' || i, 'procedural', 'positive',
             ARRAY(SELECT sin(i * k * 12.9898 + k * 78.233) FROM generate_series(1, 8) AS k)::float8[],
             'test-embedding/8'
        FROM generate_series(1, 2100) AS i`;
    await ensureMemoryVectorIndexes(p);
    await p.$executeRaw`ANALYZE investigation_memories`;
    const found = await searchMemories(p, {
      project: "default",
      text: "",
      embedding: lesson.map((x, i) => x + (i === 2 ? 0.05 : 0)),
      embeddingModel: "test-embedding/8",
      limit: 1,
    });
    expect(found.map((f) => f.memory.id)).toEqual([oldest?.id]);
    // …through the index: the planner (given statistics, as autovacuum keeps them) chose it.
    await p.$queryRaw`SELECT pg_stat_force_next_flush()::text`;
    const [index] = await p.$queryRaw<{ scans: bigint }[]>`
      SELECT idx_scan AS scans FROM pg_stat_user_indexes
       WHERE indexrelname = ${memoryVectorIndexName(8)}`;
    expect(index?.scans).toBeGreaterThan(0n);
  });
});
