import { ALL_PROJECTS, newApiToken } from "@tarsy/authz";
import { parsePolicy } from "@tarsy/config";
import {
  type ApiTokenCreated,
  ApiTokenCreateRequestSchema,
  type ApiTokenListResponse,
  type AuditListResponse,
  AuditQuerySchema,
  type AuthMeResponse,
} from "@tarsy/contracts";
import { createApiToken, getApiToken, listApiTokens, listAudit, revokeApiToken } from "@tarsy/db";
import { Hono } from "hono";
import { identityOf } from "../access.ts";
import { noteAudit } from "../authz/audit.ts";
import { requireAction, requireKnownProject } from "../authz/guard.ts";
import type { IngestResources } from "../deps.ts";
import { conflict, HttpError, notFound } from "../errors.ts";
import { presentAudit, presentToken } from "../present-access.ts";
import { pathId, readJson, readQuery } from "../request.ts";

const TTL_UNIT_MS = { m: 60_000, h: 3600_000, d: 86_400_000 } as const;

/** `30d` → milliseconds. */
export function ttlMs(ttl: string): number {
  const unit = ttl.slice(-1) as keyof typeof TTL_UNIT_MS;
  return Number(ttl.slice(0, -1)) * TTL_UNIT_MS[unit];
}

/** `/auth/me`, `/tokens` and `/audit`. */
export function accessRoutes(deps: IngestResources): Hono {
  const app = new Hono();
  const { authorizer } = deps.access;
  const config = deps.config.authorization;
  const now = () => (deps.clock ? deps.clock() : new Date());

  app.get("/auth/me", (c) => {
    const identity = identityOf(c);
    const body: AuthMeResponse = {
      enabled: authorizer.enabled,
      user: identity.user,
      email: identity.email ?? null,
      groups: identity.groups,
      source: identity.source,
      default_project:
        identity.source === "token" && identity.token
          ? identity.token.project
          : authorizer.defaultProject,
      projects: authorizer.permissions(identity),
    };
    return c.json(body);
  });

  app.post("/tokens", async (c) => {
    const body = await readJson(c, ApiTokenCreateRequestSchema, {
      limit: 16 * 1024,
      maxDepth: deps.settings.maxJsonDepth,
    });
    requireKnownProject(deps, body.project);
    const roles = roleNames(config.policy, authorizer.projects);
    if (!roles.includes(body.role)) {
      throw new HttpError(400, "validation_failed", `unknown role '${body.role}'`, {
        fields: [{ path: "role", message: `not a role of the policy (${roles.join(", ")})` }],
      });
    }
    requireAction(deps, c, "admin", body.project);
    const { token, hash } = newApiToken();
    const stored = await createApiToken(deps.prisma, {
      name: body.name,
      tokenHash: hash,
      project: body.project,
      role: body.role,
      createdBy: identityOf(c).user,
      expiresAt: body.ttl ? new Date(now().getTime() + ttlMs(body.ttl)) : null,
    });
    noteAudit(c, { reason: `token ${stored.id} (${stored.name}, ${stored.role}) created` });
    deps.logger.info({ token_id: stored.id, project: stored.project }, "API token created");
    const response: ApiTokenCreated = { ...presentToken(stored), token };
    return c.json(response, 201);
  });

  app.get("/tokens", async (c) => {
    const projects = authorizer.enabled
      ? authorizer.projectsFor(identityOf(c), "admin")
      : undefined;
    const body: ApiTokenListResponse = {
      tokens: (await listApiTokens(deps.prisma, projects)).map(presentToken),
    };
    return c.json(body);
  });

  app.delete("/tokens/:id", async (c) => {
    const id = pathId(c, "id", "token");
    const stored = await getApiToken(deps.prisma, id);
    const identity = identityOf(c);
    if (!stored || !authorizer.can(identity, "get", stored.project)) {
      throw notFound("token", id);
    }
    requireAction(deps, c, "admin", stored.project);
    if (!(await revokeApiToken(deps.prisma, id, identity.user, now()))) {
      throw conflict(`token ${id} is revoked already`);
    }
    noteAudit(c, { reason: `token ${id} revoked` });
    deps.logger.info({ token_id: id, project: stored.project }, "API token revoked");
    return c.body(null, 204);
  });

  app.get("/audit", async (c) => {
    const q = readQuery(c, AuditQuerySchema);
    const entries = await listAudit(deps.prisma, {
      limit: q.limit,
      ...(q.before ? { before: BigInt(q.before) } : {}),
      ...(q.actor ? { actor: q.actor } : {}),
      ...(q.session_id ? { sessionId: q.session_id } : {}),
      ...(q.outcome ? { outcome: q.outcome } : {}),
    });
    const last = entries.at(-1);
    const body: AuditListResponse = {
      entries: entries.map(presentAudit),
      next_before: entries.length === q.limit && last ? last.id.toString() : null,
    };
    return c.json(body);
  });

  return app;
}

/** The roles a token may carry: every `g` target and `p` subject of the policy. */
function roleNames(policy: string, projects: readonly string[]): string[] {
  const names = parsePolicy(policy, projects).rules.map((r) =>
    r.kind === "g" ? r.role : r.subject,
  );
  return [...new Set(names)].filter((n) => n !== ALL_PROJECTS).sort();
}
