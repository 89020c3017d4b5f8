import {
  MemoryListQuerySchema,
  type MemoryListResponse,
  MemoryUpdateRequestSchema,
  type SessionMemoriesResponse,
} from "@tarsy/contracts";
import {
  deleteMemory,
  getMemory,
  getSession,
  injectedMemories,
  listMemories,
  presentMemory,
  sessionMemories,
  updateMemory,
} from "@tarsy/db";
import { type Context, Hono } from "hono";
import { noteAudit } from "../authz/audit.ts";
import { visibleProjects } from "../authz/guard.ts";
import type { IngestResources } from "../deps.ts";
import { HttpError, notFound } from "../errors.ts";
import { pathId, readJson, readQuery } from "../request.ts";

/** Content is at most 10,000 characters: 4 bytes each, with room for the other fields. */
const MEMORY_BODY_LIMIT = 64 * 1024;

const memoryNotFound = (id: string) =>
  new HttpError(404, "memory_not_found", `memory ${id} not found`);

/** The `:id` of a memory route; the guard already hid memories of other projects. */
const memoryId = (c: Context): string => {
  const id = c.req.param("id") ?? "";
  return id.toLowerCase();
};

/**
 * Investigation memory (#24): `GET /api/v1/memories` (a page of the caller's projects'
 * memories), `GET|PATCH|DELETE /api/v1/memories/:id`. A person's edit of the content drops its
 * embedding (it described the old text); ingest-api never re-embeds, so the memory is found by
 * its words until the agent side embeds it again.
 */
export function memoryRoutes(deps: IngestResources): Hono {
  const app = new Hono();
  const { prisma } = deps;

  app.get("/", async (c) => {
    const q = readQuery(c, MemoryListQuerySchema);
    const page = await listMemories(prisma, visibleProjects(deps, c) ?? null, q);
    const body: MemoryListResponse = {
      memories: page.memories.map(presentMemory),
      total: page.total,
      page: q.page,
      page_size: q.page_size,
      total_pages: Math.ceil(page.total / q.page_size),
    };
    return c.json(body);
  });

  app.get("/:id", async (c) => {
    const id = memoryId(c);
    const memory = await getMemory(prisma, id);
    if (!memory) throw memoryNotFound(id);
    return c.json(presentMemory(memory));
  });

  app.patch("/:id", async (c) => {
    const id = memoryId(c);
    const change = await readJson(c, MemoryUpdateRequestSchema, {
      limit: MEMORY_BODY_LIMIT,
      maxDepth: deps.settings.maxJsonDepth,
    });
    const memory = await updateMemory(prisma, id, change);
    if (!memory) throw memoryNotFound(id);
    const fields = Object.keys(change).filter(
      (k) => change[k as keyof typeof change] !== undefined,
    );
    noteAudit(c, { project: memory.project, reason: `memory ${id} changed: ${fields.join(", ")}` });
    deps.logger.info({ memory_id: id, project: memory.project, fields }, "memory changed");
    return c.json(presentMemory(memory));
  });

  app.delete("/:id", async (c) => {
    const id = memoryId(c);
    const memory = await getMemory(prisma, id);
    if (!memory || !(await deleteMemory(prisma, id))) throw memoryNotFound(id);
    noteAudit(c, { project: memory.project, reason: `memory ${id} deleted` });
    deps.logger.info({ memory_id: id, project: memory.project }, "memory deleted");
    return c.body(null, 204);
  });

  return app;
}

/**
 * `GET /api/v1/sessions/:id/memories` (learned from the session) and
 * `/injected-memories` (given to its agents), as plain lists.
 */
export function sessionMemoryRoutes(deps: IngestResources): Hono {
  const app = new Hono();
  const { prisma } = deps;

  const list = (read: typeof sessionMemories) => async (c: Context) => {
    const id = pathId(c, "id", "session");
    if (!(await getSession(prisma, id))) throw notFound("session", id);
    const body: SessionMemoriesResponse = (await read(prisma, id)).map(presentMemory);
    return c.json(body);
  };
  app.get("/:id/memories", list(sessionMemories));
  app.get("/:id/injected-memories", list(injectedMemories));

  return app;
}
