import {
  type MemoryCategory,
  type MemoryListResponse,
  MemoryListResponseSchema,
  type MemoryResponse,
  MemoryResponseSchema,
  type MemoryValence,
  SessionMemoriesResponseSchema,
} from "@tarsy/contracts";
import {
  createMemories,
  deprecateMemories,
  getMemory,
  listAudit,
  recordInjectedMemories,
  softDeleteSession,
} from "@tarsy/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedSession } from "./seed.ts";
import {
  AUTHZ_CONFIG_DIR,
  conforms,
  type ErrorBody,
  eventually,
  type Harness,
  request,
  startHarness,
} from "./support.ts";

/**
 * Investigation memory over HTTP (#24): the list with its filters and pages, one memory, a
 * person's edits and deletes, a session's learned and injected memories, and what authorization
 * lets each caller see and change (team-a's people never learn of team-b's memories).
 */

const UNKNOWN = "00000000-0000-4000-8000-000000000000";
const MODEL = "test-embedding/4";
type Headers = Record<string, string>;
const as = (user: string, groups: string): Headers => ({
  "x-forwarded-user": user,
  "x-forwarded-groups": groups,
});
const ADMIN = as("adam", "admins");
const OPERATOR_A = as("olga", "operators-a");
const VIEWER_A = as("vera", "viewers-a");

interface Spec {
  content?: string;
  category?: MemoryCategory;
  valence?: MemoryValence;
  deprecated?: boolean;
}

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ configDir: AUTHZ_CONFIG_DIR });
});
afterAll(async () => {
  await h?.close();
});

/** A session of `project` and memories learned from it (embedded), as the reflector stores them. */
async function learned(project: string, specs: Spec[]) {
  const session = await seedSession(h.db.prisma, { project });
  const rows = await createMemories(
    h.db.prisma,
    { project, sourceSessionId: session.id, alertType: "PodCrash", chainId: "k8s" },
    specs.map((s, i) => ({
      content: s.content ?? `learning ${i} of ${session.id}`,
      category: s.category ?? "procedural",
      valence: s.valence ?? "positive",
      confidence: 0.7,
      embedding: [1, 0, 0, i],
      embeddingModel: MODEL,
    })),
  );
  for (const [i, s] of specs.entries()) {
    const row = rows[i];
    if (s.deprecated && row) {
      await deprecateMemories(h.db.prisma, row.project, [row.id]);
    }
  }
  return { session, ids: rows.map((r) => r.id) };
}

const list = async (query: string, headers: Headers = ADMIN) => {
  const res = await request<MemoryListResponse & ErrorBody>(`${h.url}/api/v1/memories?${query}`, {
    headers,
  });
  return res;
};

const listed = async (query: string, headers: Headers = ADMIN) => {
  const res = await list(query, headers);
  expect(res.status).toBe(200);
  conforms(MemoryListResponseSchema, res.body);
  return res.body;
};

const patch = (id: string, body: unknown, headers: Headers = OPERATOR_A) =>
  request<MemoryResponse & ErrorBody>(`${h.url}/api/v1/memories/${id}`, {
    method: "PATCH",
    body,
    headers,
  });

const del = (id: string, headers: Headers = OPERATOR_A) =>
  request<ErrorBody>(`${h.url}/api/v1/memories/${id}`, { method: "DELETE", headers });

const one = (id: string, headers: Headers = ADMIN) =>
  request<MemoryResponse & ErrorBody>(`${h.url}/api/v1/memories/${id}`, { headers });

describe("GET /api/v1/memories", () => {
  it("lists memories newest first, filtered by category, valence, deprecated and session", async () => {
    const { session, ids } = await learned("team-a", [
      { category: "procedural", valence: "positive" },
      { category: "semantic", valence: "negative" },
      { category: "semantic", valence: "neutral", deprecated: true },
      { category: "episodic", valence: "negative" },
    ]);
    const [proc, semNeg, semDep, epi] = ids;
    const other = await learned("team-a", [{ category: "semantic" }]);
    const of = `source_session_id=${session.id}`;

    const all = await listed(of);
    expect(all.total).toBe(4);
    expect(new Set(all.memories.map((m) => m.id))).toEqual(new Set(ids));
    expect(all.memories.map((m) => m.id)).not.toContain(other.ids[0]);
    const times = all.memories.map((m) => Date.parse(m.created_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(all.memories[0]).not.toHaveProperty("embedding");

    const ids_ = (body: MemoryListResponse) => body.memories.map((m) => m.id).sort();
    expect(ids_(await listed(`${of}&category=semantic`))).toEqual([semNeg, semDep].sort());
    expect(ids_(await listed(`${of}&valence=negative`))).toEqual([semNeg, epi].sort());
    expect(ids_(await listed(`${of}&deprecated=true`))).toEqual([semDep]);
    expect(ids_(await listed(`${of}&deprecated=false`))).toEqual([proc, semNeg, epi].sort());
    expect(ids_(await listed(`${of}&category=semantic&deprecated=false`))).toEqual([semNeg]);
    expect(ids_(await listed(`${of}&category=procedural&valence=negative`))).toEqual([]);
    expect(ids_(await listed(`${of}&project=team-b`))).toEqual([]);
  });

  it("pages: total, total_pages, and pages that hold every memory exactly once", async () => {
    const { session, ids } = await learned("team-a", [{}, {}, {}, {}, {}]);
    const seen: string[] = [];
    for (const page of [1, 2, 3]) {
      const body = await listed(`source_session_id=${session.id}&page=${page}&page_size=2`);
      expect(body).toMatchObject({ total: 5, page, page_size: 2, total_pages: 3 });
      expect(body.memories).toHaveLength(page === 3 ? 1 : 2);
      seen.push(...body.memories.map((m) => m.id));
    }
    expect(seen.sort()).toEqual([...ids].sort());
    const past = await listed(`source_session_id=${session.id}&page=4&page_size=2`);
    expect(past).toMatchObject({ total: 5, total_pages: 3, memories: [] });
    const none = await listed(`source_session_id=${UNKNOWN}`);
    expect(none).toMatchObject({ total: 0, total_pages: 0, page: 1, page_size: 20 });
  });

  it("answers 400 naming the parameter for an unknown one or a bad value", async () => {
    for (const [query, field] of [
      ["sort=confidence", "sort"],
      ["category=hunch", "category"],
      ["valence=great", "valence"],
      ["deprecated=yes", "deprecated"],
      ["page=0", "page"],
      ["page_size=101", "page_size"],
      ["page_size=ten", "page_size"],
      ["source_session_id=not-a-uuid", "source_session_id"],
    ]) {
      const res = await list(query ?? "");
      expect([query, res.status, res.body.error?.code]).toEqual([query, 400, "validation_failed"]);
      expect(res.body.error.message).toContain(field);
    }
  });
});

describe("one memory", () => {
  it("GET answers the memory; an unknown or malformed id is 404 memory_not_found", async () => {
    const { session, ids } = await learned("team-a", [
      { content: "OOMKilled pods: compare the limit with the heap", category: "semantic" },
    ]);
    const id = ids[0] ?? "";
    const res = await one(id);
    expect(res.status).toBe(200);
    conforms(MemoryResponseSchema, res.body);
    expect(res.body).toMatchObject({
      id,
      project: "team-a",
      content: "OOMKilled pods: compare the limit with the heap",
      category: "semantic",
      valence: "positive",
      confidence: 0.7,
      seen_count: 1,
      source_session_id: session.id,
      alert_type: "PodCrash",
      chain_id: "k8s",
      deprecated: false,
    });
    expect(res.body).not.toHaveProperty("embedding");
    for (const missing of [UNKNOWN, "nope"]) {
      const gone = await one(missing);
      expect([gone.status, gone.body.error?.code]).toEqual([404, "memory_not_found"]);
    }
  });

  it("PATCH changes the named fields; a new content drops the stored embedding", async () => {
    const { ids } = await learned("team-a", [{ content: "restart the pod", valence: "neutral" }]);
    const id = ids[0] ?? "";

    const recategorized = await patch(id, { category: "episodic", valence: "negative" });
    expect(recategorized.status).toBe(200);
    conforms(MemoryResponseSchema, recategorized.body);
    expect(recategorized.body).toMatchObject({
      content: "restart the pod",
      category: "episodic",
      valence: "negative",
      deprecated: false,
    });
    // Only the content decides the embedding: a category change keeps it.
    expect((await getMemory(h.db.prisma, id))?.embedding).toEqual([1, 0, 0, 0]);

    const deprecated = await patch(id, { deprecated: true });
    expect(deprecated.body).toMatchObject({ deprecated: true, category: "episodic" });
    expect((await one(id)).body.deprecated).toBe(true);
    expect((await patch(id, { deprecated: false })).body.deprecated).toBe(false);

    const rewritten = await patch(id, {
      content: "  check the readiness probe before restarting  ",
    });
    expect(rewritten.status).toBe(200);
    expect(rewritten.body.content).toBe("check the readiness probe before restarting");
    const row = await getMemory(h.db.prisma, id);
    expect(row).toMatchObject({ embedding: [], embeddingModel: null });
    expect((await one(id)).body.content).toBe("check the readiness probe before restarting");
  });

  it("PATCH answers 400 for an empty body, an unknown field or a bad value, and changes nothing", async () => {
    const { ids } = await learned("team-a", [{ content: "keep me", category: "semantic" }]);
    const id = ids[0] ?? "";
    for (const [body, field] of [
      [{}, "(body)"],
      [{ confidence: 1 }, "confidence"],
      [{ category: "hunch" }, "category"],
      [{ valence: "great" }, "valence"],
      [{ content: "   " }, "content"],
      [{ deprecated: "yes" }, "deprecated"],
    ] as const) {
      const res = await patch(id, body);
      const what = JSON.stringify(body);
      expect([what, res.status, res.body.error?.code]).toEqual([what, 400, "validation_failed"]);
      expect(res.body.error.message).toContain(field);
    }
    expect((await one(id)).body).toMatchObject({
      content: "keep me",
      category: "semantic",
      deprecated: false,
    });
    expect((await getMemory(h.db.prisma, id))?.embedding).toEqual([1, 0, 0, 0]);
    const unknown = await patch(UNKNOWN, { deprecated: true });
    expect([unknown.status, unknown.body.error?.code]).toEqual([404, "memory_not_found"]);
  });

  it("DELETE answers 204; the memory is gone from every route, also where it was injected", async () => {
    const { session, ids } = await learned("team-a", [{}, {}]);
    const [gone = "", kept = ""] = ids;
    const later = await seedSession(h.db.prisma, { project: "team-a" });
    await recordInjectedMemories(h.db.prisma, later.id, [gone, kept]);

    const res = await fetch(`${h.url}/api/v1/memories/${gone}`, {
      method: "DELETE",
      headers: OPERATOR_A,
    });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");

    expect((await one(gone)).status).toBe(404);
    expect((await one(gone)).body.error.code).toBe("memory_not_found");
    const again = await del(gone);
    expect([again.status, again.body.error?.code]).toEqual([404, "memory_not_found"]);
    expect((await listed(`source_session_id=${session.id}`)).memories.map((m) => m.id)).toEqual([
      kept,
    ]);
    const injected = await request<MemoryResponse[]>(
      `${h.url}/api/v1/sessions/${later.id}/injected-memories`,
      { headers: ADMIN },
    );
    expect(injected.body.map((m) => m.id)).toEqual([kept]);
  });
});

describe("a session's memories", () => {
  it("/memories lists what was learned from it, /injected-memories what its agents were given", async () => {
    const earlier = await learned("team-a", [
      { content: "earlier: check quotas" },
      { content: "earlier: node pressure evicts pods" },
    ]);
    const session = await learned("team-a", [
      { content: "now: the image tag was wrong", category: "episodic", valence: "negative" },
    ]);
    const [q = "", n = ""] = earlier.ids;
    // Injected by two agents in turn: listed in that order.
    await recordInjectedMemories(h.db.prisma, session.session.id, [n]);
    await recordInjectedMemories(h.db.prisma, session.session.id, [q]);

    const get = async (path: string) => {
      const res = await request<MemoryResponse[]>(`${h.url}${path}`, { headers: ADMIN });
      expect(res.status).toBe(200);
      conforms(SessionMemoriesResponseSchema, res.body);
      return res.body;
    };
    const learnedFrom = await get(`/api/v1/sessions/${session.session.id}/memories`);
    expect(learnedFrom.map((m) => [m.content, m.category, m.valence])).toEqual([
      ["now: the image tag was wrong", "episodic", "negative"],
    ]);
    const given = await get(`/api/v1/sessions/${session.session.id}/injected-memories`);
    expect(given.map((m) => m.content)).toEqual([
      "earlier: node pressure evicts pods",
      "earlier: check quotas",
    ]);
    // The earlier session taught two things and was given none.
    expect(await get(`/api/v1/sessions/${earlier.session.id}/memories`)).toHaveLength(2);
    expect(await get(`/api/v1/sessions/${earlier.session.id}/injected-memories`)).toEqual([]);
  });

  it("answers 404 for an unknown or deleted session", async () => {
    const { session } = await learned("team-a", [{}]);
    await softDeleteSession(h.db.prisma, session.id);
    for (const id of [UNKNOWN, session.id]) {
      for (const sub of ["memories", "injected-memories"]) {
        const res = await request<ErrorBody>(`${h.url}/api/v1/sessions/${id}/${sub}`, {
          headers: ADMIN,
        });
        expect([sub, res.status, res.body.error?.code]).toEqual([sub, 404, "not_found"]);
      }
    }
  });
});

describe("authorization", () => {
  it("a team-a operator never sees team-b's memories, in any route", async () => {
    const a = await learned("team-a", [{ content: "team-a knows this" }]);
    const b = await learned("team-b", [{ content: "team-b's secret runbook step" }]);
    const bId = b.ids[0] ?? "";
    const bLater = await seedSession(h.db.prisma, { project: "team-b" });
    await recordInjectedMemories(h.db.prisma, bLater.id, b.ids);

    const mine = await listed("page_size=100", OPERATOR_A);
    expect(mine.memories.map((m) => m.id)).toContain(a.ids[0]);
    expect(mine.memories.every((m) => m.project === "team-a")).toBe(true);
    expect(mine.total).toBe(mine.memories.length);
    expect((await listed("project=team-b", OPERATOR_A)).total).toBe(0);
    expect((await listed(`source_session_id=${b.session.id}`, OPERATOR_A)).total).toBe(0);
    // The admin sees both: the filter is the caller's, not the data's.
    const everyone = await listed("page_size=100", ADMIN);
    expect(everyone.memories.map((m) => m.id)).toEqual(expect.arrayContaining([a.ids[0], bId]));

    for (const res of [await one(bId, OPERATOR_A), await patch(bId, { deprecated: true })]) {
      expect([res.status, res.body.error?.code]).toEqual([404, "memory_not_found"]);
      expect(res.body.error.message).toBe(`memory ${bId} not found`);
    }
    const deleted = await del(bId);
    expect([deleted.status, deleted.body.error?.code]).toEqual([404, "memory_not_found"]);
    for (const path of [`${b.session.id}/memories`, `${bLater.id}/injected-memories`]) {
      const res = await request<ErrorBody>(`${h.url}/api/v1/sessions/${path}`, {
        headers: OPERATOR_A,
      });
      expect([path, res.status, res.body.error?.code]).toEqual([path, 404, "not_found"]);
      const admin = await request<MemoryResponse[]>(`${h.url}/api/v1/sessions/${path}`, {
        headers: ADMIN,
      });
      expect(admin.body.map((m) => m.id)).toEqual([bId]);
    }
    // Nothing happened to it.
    expect(await getMemory(h.db.prisma, bId)).toMatchObject({
      deprecated: false,
      content: "team-b's secret runbook step",
    });
  });

  it("a viewer reads team-a's memories but may neither change nor delete them (403)", async () => {
    const { ids } = await learned("team-a", [{ content: "viewers only read" }]);
    const id = ids[0] ?? "";
    expect((await one(id, VIEWER_A)).body.content).toBe("viewers only read");
    const changed = await patch(id, { deprecated: true }, VIEWER_A);
    expect([changed.status, changed.body.error?.code]).toEqual([403, "forbidden"]);
    const deleted = await del(id, VIEWER_A);
    expect([deleted.status, deleted.body.error?.code]).toEqual([403, "forbidden"]);
    expect(await getMemory(h.db.prisma, id)).toMatchObject({ deprecated: false });
    const nobody = await one(id, {});
    expect(nobody.status).toBe(401);
  });

  it("changes, deletes and refusals are in the audit log with who, what and the project", async () => {
    const { ids } = await learned("team-a", [{}, {}]);
    const [changed = "", removed = ""] = ids;
    expect((await patch(changed, { deprecated: true, valence: "negative" })).status).toBe(200);
    expect((await del(removed)).status).toBe(204);
    expect((await del(changed, VIEWER_A)).status).toBe(403);

    const find = async () => {
      const rows = await listAudit(h.db.prisma, { limit: 500 });
      const at = (actor: string, method: string, id: string) =>
        rows.find(
          (r) => r.actor === actor && r.method === method && r.path === `/api/v1/memories/${id}`,
        );
      return [
        at("olga", "PATCH", changed),
        at("olga", "DELETE", removed),
        at("vera", "DELETE", changed),
      ];
    };
    await eventually(async () => (await find()).every(Boolean));
    const [patched, deletedRow, refused] = await find();
    expect(patched).toMatchObject({
      action: "update",
      outcome: "allowed",
      status: 200,
      project: "team-a",
    });
    expect(patched?.reason).toContain("deprecated");
    expect(patched?.reason).toContain("valence");
    expect(deletedRow).toMatchObject({
      action: "delete",
      outcome: "allowed",
      status: 204,
      project: "team-a",
    });
    expect(refused).toMatchObject({
      action: "delete",
      outcome: "denied",
      status: 403,
      project: "team-a",
    });
  });
});

describe("authorization off", () => {
  let open: Harness;
  beforeAll(async () => {
    open = await startHarness();
  });
  afterAll(async () => {
    await open?.close();
  });

  it("every caller sees and edits every project's memories", async () => {
    const [m] = await createMemories(
      open.db.prisma,
      { project: "default", sourceSessionId: null, alertType: null, chainId: null },
      [
        {
          content: "from a reviewer's feedback",
          category: "semantic",
          valence: "neutral",
          confidence: 0.9,
          embedding: [],
          embeddingModel: null,
        },
      ],
    );
    const res = await request<MemoryListResponse>(`${open.url}/api/v1/memories`);
    expect(res.status).toBe(200);
    expect(res.body.memories.map((x) => [x.content, x.source_session_id])).toEqual([
      ["from a reviewer's feedback", null],
    ]);
    const changed = await request<MemoryResponse>(`${open.url}/api/v1/memories/${m?.id}`, {
      method: "PATCH",
      body: { deprecated: true },
    });
    expect([changed.status, changed.body.deprecated]).toEqual([200, true]);
  });
});
