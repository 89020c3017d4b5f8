/**
 * Investigation memory (#24, the Go TARSy's ADR-0014): discrete learnings extracted from
 * scored sessions, found again by hybrid search (the embedding's cosine similarity and
 * full-text keywords, fused by reciprocal rank) for later investigations of the same project.
 *
 * `project` is a hard filter on every query. Embeddings are stored as float8 arrays. Where
 * the database has pgvector (`CREATE EXTENSION vector`; the migrations create it when the
 * server offers it), they are ranked by its cosine distance over all of the project's
 * memories, through an HNSW index per dimension (`ensureMemoryVectorIndexes`). Without it,
 * they are compared in SQL: the candidates are the keyword matches plus the project's most
 * recently updated memories, so a memory with no word in common is still found by meaning.
 * Either way a memory whose embedding failed is still found by its words.
 */
import {
  type MemoryCategory,
  type MemoryListQuery,
  type MemoryResponse,
  type MemoryValence,
  type QualityRating,
  TERMINAL_SESSION_STATUSES,
} from "@tarsy/contracts";
import { type DbClient, inTransaction, type PrismaClient } from "./client.ts";
import { type InvestigationMemory, Prisma } from "./generated/prisma/client.ts";

export type { InvestigationMemory };

/** Confidence of a memory the reflector extracted from a scored session. */
export const EXTRACTED_CONFIDENCE = 0.7;
/** Confidence of a memory learned from a reviewer's written feedback. */
export const FEEDBACK_CONFIDENCE = 0.9;
/** Reciprocal rank fusion's k. */
const RRF_K = 60;
/** Vector candidates less similar than this are noise, not memories. */
export const MIN_SIMILARITY = 0.45;
/** Without pgvector: how many of a project's newest memories are compared by embedding. */
const VECTOR_SCAN = 2000;
/** With pgvector: how many nearest memories the index gives before the threshold. */
const VECTOR_CANDIDATES = 100;
/** pgvector indexes (HNSW) hold at most this many dimensions of `vector`. */
export const MAX_INDEXED_DIMENSIONS = 2000;
/** How many keyword matches are considered. */
const KEYWORD_CANDIDATES = 50;
/** 90-day half-life: exp(-0.0077 × age in days). */
const DECAY_PER_DAY = 0.0077;
const ALERT_TYPE_BOOST = 0.05;
const CHAIN_BOOST = 0.03;

/** The API's shape of a memory (never its embedding). */
export function presentMemory(m: InvestigationMemory): MemoryResponse {
  return {
    id: m.id,
    project: m.project,
    content: m.content,
    category: m.category,
    valence: m.valence,
    confidence: m.confidence,
    seen_count: m.seenCount,
    source_session_id: m.sourceSessionId,
    alert_type: m.alertType,
    chain_id: m.chainId,
    deprecated: m.deprecated,
    created_at: m.createdAt.toISOString(),
    updated_at: m.updatedAt.toISOString(),
    last_seen_at: m.lastSeenAt.toISOString(),
  };
}

export interface NewMemory {
  content: string;
  category: MemoryCategory;
  valence: MemoryValence;
  confidence: number;
  /** Empty when embedding failed. */
  embedding: number[];
  embeddingModel: string | null;
}

export interface MemoryScope {
  project: string;
  sourceSessionId: string | null;
  alertType: string | null;
  chainId: string | null;
}

/** Stores new memories of one session (or of its review). */
export async function createMemories(
  client: DbClient,
  scope: MemoryScope,
  memories: readonly NewMemory[],
): Promise<InvestigationMemory[]> {
  if (memories.length === 0) return [];
  return inTransaction(client, (tx) =>
    Promise.all(
      memories.map((m) =>
        tx.investigationMemory.create({
          data: {
            project: scope.project,
            sourceSessionId: scope.sourceSessionId,
            alertType: scope.alertType,
            chainId: scope.chainId,
            content: m.content,
            category: m.category,
            valence: m.valence,
            confidence: clamp(m.confidence),
            embedding: m.embedding,
            embeddingModel: m.embedding.length > 0 ? m.embeddingModel : null,
          },
        }),
      ),
    ),
  );
}

const clamp = (c: number): number => Math.min(1, Math.max(0, c));

/**
 * The reflector confirmed these memories: confidence × 1.1 (at most 1), seen once more, and
 * their decay clock reset. Ids outside the project, deprecated or unknown are ignored.
 * Returns how many changed.
 */
export async function reinforceMemories(
  client: DbClient,
  project: string,
  ids: readonly string[],
  now: Date = new Date(),
): Promise<number> {
  const valid = ids.filter(isUuid);
  if (valid.length === 0) return 0;
  return client.$executeRaw`
    UPDATE investigation_memories
       SET confidence = LEAST(confidence * 1.1, 1.0), seen_count = seen_count + 1,
           last_seen_at = ${now}, updated_at = ${now}
     WHERE project = ${project} AND NOT deprecated AND id = ANY(${valid}::uuid[])`;
}

/** The reflector (or a reviewer) found these memories wrong: they leave retrieval. */
export async function deprecateMemories(
  client: DbClient,
  project: string,
  ids: readonly string[],
): Promise<number> {
  const valid = ids.filter(isUuid);
  if (valid.length === 0) return 0;
  const { count } = await client.investigationMemory.updateMany({
    where: { project, id: { in: valid }, deprecated: false },
    data: { deprecated: true },
  });
  return count;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const isUuid = (id: string): boolean => UUID.test(id);

/**
 * A reviewer's rating of a session refines the memories learned from it (the Go TARSy's
 * rules): accurate × 1.2 (at most 1), partially accurate × 0.6, inaccurate deprecates them.
 */
export async function applyRatingToMemories(
  client: DbClient,
  sessionId: string,
  rating: QualityRating,
): Promise<number> {
  if (rating === "inaccurate") {
    const { count } = await client.investigationMemory.updateMany({
      where: { sourceSessionId: sessionId, deprecated: false },
      data: { deprecated: true },
    });
    return count;
  }
  const factor = rating === "accurate" ? 1.2 : 0.6;
  return client.$executeRaw`
    UPDATE investigation_memories
       SET confidence = LEAST(confidence * ${factor}, 1.0), updated_at = now()
     WHERE source_session_id = ${sessionId}::uuid AND NOT deprecated`;
}

export interface MemorySearch {
  project: string;
  /** Free text: its words are matched (any of them) against the memories' words. */
  text: string;
  /** The text's embedding (empty: keywords only). */
  embedding: readonly number[];
  /** Only vectors of the same model are compared. */
  embeddingModel: string | null;
  alertType?: string | null;
  chainId?: string | null;
  limit: number;
  excludeIds?: readonly string[];
}

export interface ScoredMemory {
  memory: InvestigationMemory;
  /** Cosine similarity to the query's embedding, when both have one. */
  similarity: number | null;
  score: number;
}

/** The words of a free-text query, as an OR tsquery for the `simple` configuration. */
export function keywordQuery(text: string): string {
  const words = [...new Set(text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [])]
    .filter((w) => w.length > 1)
    .slice(0, 64);
  return words.map((w) => `'${w}'`).join(" | ");
}

/**
 * Hybrid search over the project's live memories: vector candidates (similarity at least
 * MIN_SIMILARITY) and keyword candidates fused by reciprocal rank, weighted by confidence
 * (0.7 + 0.3 × confidence) and recency (90-day half-life), plus small boosts for the same
 * alert type and chain. Best first.
 */
export async function searchMemories(
  client: DbClient,
  search: MemorySearch,
): Promise<ScoredMemory[]> {
  const tsquery = keywordQuery(search.text);
  const embedding = search.embedding.length > 0 ? [...search.embedding] : null;
  const exclude = (search.excludeIds ?? []).filter(isUuid);
  const pgvector = embedding ? await pgvectorVersion(client) : null;
  const vector =
    embedding && pgvector
      ? pgvectorCandidates(search, embedding, exclude)
      : arrayCandidates(search, embedding);
  const query = Prisma.sql`
    WITH live AS (
      SELECT id, embedding, embedding_model, content, updated_at FROM investigation_memories
       WHERE project = ${search.project} AND NOT deprecated
         AND NOT (id = ANY(${exclude}::uuid[]))
    ),
    vector AS (${vector}),
    keyword AS (
      SELECT id, ROW_NUMBER() OVER (ORDER BY rank DESC, id) AS rank FROM (
        SELECT id, ts_rank(to_tsvector('simple', content), to_tsquery('simple', ${tsquery})) AS rank
          FROM live
         WHERE ${tsquery} <> '' AND to_tsvector('simple', content) @@ to_tsquery('simple', ${tsquery})
         ORDER BY rank DESC LIMIT ${KEYWORD_CANDIDATES}::int
      ) k
    ),
    fused AS (
      SELECT COALESCE(v.id, k.id) AS id, v.similarity,
             COALESCE(1.0 / (${RRF_K}::int + v.rank), 0) + COALESCE(1.0 / (${RRF_K}::int + k.rank), 0) AS rrf
        FROM vector v FULL OUTER JOIN keyword k ON v.id = k.id
    )
    SELECT f.id, f.similarity::float8 AS similarity,
           (f.rrf * (0.7 + 0.3 * m.confidence)
              * exp(-(${DECAY_PER_DAY}::float8) * EXTRACT(EPOCH FROM (now() - m.updated_at)) / 86400.0)
            + CASE WHEN m.alert_type IS NOT DISTINCT FROM ${search.alertType ?? null}
                    AND ${search.alertType ?? null}::text IS NOT NULL
                   THEN ${ALERT_TYPE_BOOST}::float8 ELSE 0 END
            + CASE WHEN m.chain_id IS NOT DISTINCT FROM ${search.chainId ?? null}
                    AND ${search.chainId ?? null}::text IS NOT NULL
                   THEN ${CHAIN_BOOST}::float8 ELSE 0 END)::float8 AS score
      FROM fused f JOIN investigation_memories m ON m.id = f.id
     ORDER BY score DESC, m.updated_at DESC
     LIMIT ${search.limit}::int`;
  type Row = { id: string; similarity: number | null; score: number };
  // The index gives at most ef_search rows (default 40): ask for all the candidates. pgvector
  // ≥ 0.8 also keeps scanning until enough rows pass the filters (project, model, deprecated).
  const rows = pgvector
    ? await inTransaction(client, async (tx) => {
        await tx.$queryRaw`SELECT set_config('hnsw.ef_search', ${String(VECTOR_CANDIDATES)}, true)`;
        if (atLeast(pgvector, 0, 8)) {
          await tx.$queryRaw`SELECT set_config('hnsw.iterative_scan', 'strict_order', true)`;
        }
        return tx.$queryRaw<Row[]>(query);
      })
    : await client.$queryRaw<Row[]>(query);
  if (rows.length === 0) return [];
  const memories = await client.investigationMemory.findMany({
    where: { id: { in: rows.map((r) => r.id) } },
  });
  const byId = new Map(memories.map((m) => [m.id, m]));
  return rows.flatMap((r) => {
    const memory = byId.get(r.id);
    return memory ? [{ memory, similarity: r.similarity, score: r.score }] : [];
  });
}

/**
 * Without pgvector: cosine similarity in SQL over the project's newest VECTOR_SCAN memories
 * embedded by the same model with the same dimension.
 */
function arrayCandidates(search: MemorySearch, embedding: number[] | null): Prisma.Sql {
  return Prisma.sql`
      SELECT id, similarity, ROW_NUMBER() OVER (ORDER BY similarity DESC) AS rank FROM (
        SELECT c.id,
               (SELECT SUM(a * b) FROM unnest(c.embedding, ${embedding}::float8[]) AS t(a, b))
               / NULLIF(
                   sqrt((SELECT SUM(a * a) FROM unnest(c.embedding) AS t(a)))
                   * sqrt((SELECT SUM(b * b) FROM unnest(${embedding}::float8[]) AS t(b))), 0)
               AS similarity
          FROM (
            SELECT * FROM live
             WHERE ${embedding}::float8[] IS NOT NULL
               AND embedding_model IS NOT DISTINCT FROM ${search.embeddingModel}
               AND cardinality(embedding) = cardinality(${embedding}::float8[])
             ORDER BY updated_at DESC LIMIT ${VECTOR_SCAN}::int
          ) c
      ) s WHERE similarity >= ${MIN_SIMILARITY}::float8`;
}

/**
 * With pgvector: the VECTOR_CANDIDATES nearest of all the project's memories by cosine
 * distance, in the shape the per-dimension HNSW index answers (the dimension is written into
 * the SQL, as the partial index's predicate and cast are).
 */
function pgvectorCandidates(
  search: MemorySearch,
  embedding: number[],
  exclude: string[],
): Prisma.Sql {
  const dims = Prisma.raw(String(embedding.length));
  const distance = Prisma.sql`(embedding::vector(${dims}) <=> ${embedding}::float8[]::vector(${dims}))`;
  return Prisma.sql`
      SELECT id, 1 - distance AS similarity, ROW_NUMBER() OVER (ORDER BY distance, id) AS rank FROM (
        SELECT id, ${distance} AS distance FROM investigation_memories
         WHERE cardinality(embedding) = ${dims}
           AND project = ${search.project} AND NOT deprecated
           AND NOT (id = ANY(${exclude}::uuid[]))
           AND embedding_model IS NOT DISTINCT FROM ${search.embeddingModel}
         ORDER BY ${distance} LIMIT ${VECTOR_CANDIDATES}::int
      ) n WHERE 1 - distance >= ${MIN_SIMILARITY}::float8`;
}

const pgvectorVersions = new WeakMap<DbClient, Promise<string | null>>();

/**
 * pgvector's version in this database, or null without it. Read once per client: a database
 * that gains the extension is seen after a restart.
 */
export function pgvectorVersion(client: DbClient): Promise<string | null> {
  let version = pgvectorVersions.get(client);
  if (version === undefined) {
    version = client.$queryRaw<
      { v: string }[]
    >`SELECT extversion AS v FROM pg_extension WHERE extname = 'vector'`.then(
      (rows) => rows[0]?.v ?? null,
    );
    version.catch(() => pgvectorVersions.delete(client));
    pgvectorVersions.set(client, version);
  }
  return version;
}

/** Whether a version like "0.8.1" is at least major.minor. */
function atLeast(version: string, major: number, minor: number): boolean {
  const [a = 0, b = 0] = version.split(".").map((n) => Number.parseInt(n, 10));
  return a > major || (a === major && b >= minor);
}

/** The HNSW index of the memories' embeddings of one dimension. */
export const memoryVectorIndexName = (dims: number): string =>
  `investigation_memories_embedding_hnsw_${dims}`;

/**
 * With pgvector: an HNSW cosine index for each dimension the stored embeddings have (up to
 * MAX_INDEXED_DIMENSIONS), each a partial index on `embedding::vector(n)`. Runs under an
 * advisory lock, so several processes may call it at once. Returns the dimensions whose index
 * this call created; without pgvector, none.
 */
export async function ensureMemoryVectorIndexes(client: PrismaClient): Promise<number[]> {
  if ((await pgvectorVersion(client)) === null) return [];
  return client.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(${VECTOR_INDEX_LOCK_KEY}::bigint)`;
    const rows = await tx.$queryRaw<{ dims: number }[]>`
      SELECT DISTINCT cardinality(embedding) AS dims FROM investigation_memories
       WHERE cardinality(embedding) BETWEEN 1 AND ${MAX_INDEXED_DIMENSIONS}::int`;
    const existing = new Set(
      (
        await tx.$queryRaw<{ name: string }[]>`
          SELECT indexname AS name FROM pg_indexes
           WHERE tablename = 'investigation_memories'`
      ).map((r) => r.name),
    );
    const created: number[] = [];
    for (const { dims } of rows) {
      if (!Number.isInteger(dims) || existing.has(memoryVectorIndexName(dims))) continue;
      await tx.$executeRawUnsafe(
        `CREATE INDEX IF NOT EXISTS "${memoryVectorIndexName(dims)}" ON investigation_memories
           USING hnsw ((embedding::vector(${dims})) vector_cosine_ops)
           WHERE cardinality(embedding) = ${dims}`,
      );
      created.push(dims);
    }
    return created.sort((a, b) => a - b);
  }, VECTOR_INDEX_TRANSACTION);
}

/** Building an index over many memories takes longer than an ordinary transaction may. */
const VECTOR_INDEX_TRANSACTION = { timeout: 10 * 60_000, maxWait: 60_000 };

/** The advisory lock that serializes vector index creation ("tmem"). */
const VECTOR_INDEX_LOCK_KEY = 0x746d656d;

/** Records which memories went into a session's prompt (idempotent across redeliveries). */
export async function recordInjectedMemories(
  client: DbClient,
  sessionId: string,
  memoryIds: readonly string[],
): Promise<void> {
  if (memoryIds.length === 0) return;
  await client.sessionInjectedMemory.createMany({
    data: memoryIds.map((memoryId) => ({ sessionId, memoryId })),
    skipDuplicates: true,
  });
}

/** Memories learned from a session, oldest first. */
export function sessionMemories(
  client: DbClient,
  sessionId: string,
): Promise<InvestigationMemory[]> {
  return client.investigationMemory.findMany({
    where: { sourceSessionId: sessionId },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
}

/** Memories put into a session's prompts, in the order they were injected. */
export async function injectedMemories(
  client: DbClient,
  sessionId: string,
): Promise<InvestigationMemory[]> {
  const rows = await client.sessionInjectedMemory.findMany({
    where: { sessionId },
    include: { memory: true },
    orderBy: [{ createdAt: "asc" }, { memoryId: "asc" }],
  });
  return rows.map((r) => r.memory);
}

export interface MemoryPage {
  memories: InvestigationMemory[];
  total: number;
}

/** A page of memories in the given projects (null: every project), newest first. */
export async function listMemories(
  client: DbClient,
  projects: readonly string[] | null,
  query: MemoryListQuery,
): Promise<MemoryPage> {
  const where: Prisma.InvestigationMemoryWhereInput = {
    ...(projects !== null && { project: { in: [...projects] } }),
    ...(query.project !== undefined && { project: query.project }),
    ...(query.category !== undefined && { category: query.category }),
    ...(query.valence !== undefined && { valence: query.valence }),
    ...(query.deprecated !== undefined && { deprecated: query.deprecated }),
    ...(query.source_session_id !== undefined && { sourceSessionId: query.source_session_id }),
  };
  if (projects !== null && query.project !== undefined && !projects.includes(query.project)) {
    return { memories: [], total: 0 };
  }
  const [memories, total] = await Promise.all([
    client.investigationMemory.findMany({
      where,
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      skip: (query.page - 1) * query.page_size,
      take: query.page_size,
    }),
    client.investigationMemory.count({ where }),
  ]);
  return { memories, total };
}

export function getMemory(client: DbClient, id: string): Promise<InvestigationMemory | null> {
  if (!isUuid(id)) return Promise.resolve(null);
  return client.investigationMemory.findUnique({ where: { id } });
}

export interface MemoryChange {
  content?: string;
  category?: MemoryCategory;
  valence?: MemoryValence;
  deprecated?: boolean;
}

/**
 * A person's edit. A changed content loses its embedding (it described the old text) until
 * `embedding` gives the new one.
 */
export async function updateMemory(
  client: DbClient,
  id: string,
  change: MemoryChange,
  reembedded?: { embedding: number[]; embeddingModel: string | null },
): Promise<InvestigationMemory | null> {
  if (!isUuid(id)) return null;
  try {
    return await client.investigationMemory.update({
      where: { id },
      data: {
        ...change,
        ...(change.content !== undefined && {
          embedding: reembedded?.embedding ?? [],
          embeddingModel: reembedded?.embedding.length ? reembedded.embeddingModel : null,
        }),
      },
    });
  } catch (err) {
    if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === "P2025") return null;
    throw err;
  }
}

/** Deletes a memory (and where it was injected); false when there was none. */
export async function deleteMemory(client: DbClient, id: string): Promise<boolean> {
  if (!isUuid(id)) return false;
  const { count } = await client.investigationMemory.deleteMany({ where: { id } });
  return count > 0;
}

export interface PastSessionSearch {
  project: string;
  /** Identifiers that must all appear in the alert data. */
  query: string;
  alertType?: string | null;
  daysBack: number;
  limit: number;
  /** The asking session is never its own past. */
  excludeSessionId: string;
}

export interface PastSession {
  id: string;
  alertType: string;
  alertData: string;
  status: string;
  finalAnalysis: string | null;
  qualityRating: QualityRating | null;
  investigationFeedback: string | null;
  createdAt: Date;
}

/** The words of a keyword query, as an AND tsquery for the `simple` configuration. */
export function allWordsQuery(text: string): string {
  return keywordQuery(text).replaceAll(" | ", " & ");
}

/**
 * Ended sessions of the project (not deleted) whose alert data holds every word of the query,
 * newest first, within `daysBack` days.
 */
export async function searchPastSessions(
  client: DbClient,
  search: PastSessionSearch,
): Promise<PastSession[]> {
  const tsquery = allWordsQuery(search.query);
  if (tsquery === "") return [];
  return client.$queryRaw<PastSession[]>`
    SELECT id, alert_type AS "alertType", alert_data AS "alertData", status::text AS status,
           final_analysis AS "finalAnalysis", quality_rating::text AS "qualityRating",
           investigation_feedback AS "investigationFeedback", created_at AS "createdAt"
      FROM alert_sessions
     WHERE project = ${search.project} AND deleted_at IS NULL
       AND id <> ${search.excludeSessionId}::uuid
       AND status::text = ANY(${[...TERMINAL_SESSION_STATUSES]}::text[])
       AND (${search.alertType ?? null}::text IS NULL OR alert_type = ${search.alertType ?? null})
       AND created_at >= now() - make_interval(days => ${search.daysBack}::int)
       AND to_tsvector('simple', alert_data) @@ to_tsquery('simple', ${tsquery})
     ORDER BY created_at DESC
     LIMIT ${search.limit}::int`;
}
