import { ALL_PROJECTS, type Identity } from "@tarsy/authz";
import type { HttpErrorCode } from "@tarsy/contracts";
import { getMemory, getSession } from "@tarsy/db";
import type { Context, MiddlewareHandler } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { identityOf, resolveCaller } from "../access.ts";
import type { IngestResources } from "../deps.ts";
import { HttpError } from "../errors.ts";
import { auditNote, noteAudit, recordAudit } from "./audit.ts";
import { actionOf, type RouteRule, ruleFor } from "./rules.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DENIALS = new Set([401, 403]);

/**
 * Applies `ROUTE_RULES` to every request: identifies the caller (API routes but the
 * Alertmanager receiver), refuses what the rule does not allow, and audits every denial and
 * every state-changing call. An API path the table does not name fails closed (401 without
 * an identity, 403 with one). While authorization is off only identification runs.
 */
export function guard(
  deps: IngestResources,
  remoteAddressOf: (c: Context) => string | undefined,
): MiddlewareHandler {
  const { authorizer } = deps.access;
  return async (c, next) => {
    if (!c.req.path.startsWith("/api/")) return next();
    const match = ruleFor(c.req.method, c.req.path);
    // An API path no entry names (the dashboard's `/*` is not one) fails closed.
    const rule: RouteRule | undefined =
      match && match.entry.path !== "/*" ? match.entry.rule : undefined;
    if (rule?.kind === "receiver") return next();
    const address = remoteAddressOf(c);
    auditNote(c).action = rule ? actionOf(rule) : "admin";
    const deny = (
      status: ContentfulStatusCode,
      code: HttpErrorCode,
      message: string,
      identity?: Identity,
    ) => {
      if (authorizer.enabled) {
        noteAudit(c, { reason: message });
        recordAudit(deps, c, identity, address, "denied", status);
      }
      return new HttpError(status, code, message);
    };
    try {
      await resolveCaller(deps.access, c, address);
    } catch (err) {
      if (err instanceof HttpError) throw deny(err.status, err.code, err.message);
      throw err;
    }
    if (!authorizer.enabled || rule?.kind === "public") return next();
    const identity = identityOf(c);
    if (identity.source === "none") {
      throw deny(401, "unauthorized", "this route needs an identified caller", identity);
    }
    if (!rule) {
      throw deny(
        403,
        "forbidden",
        `no authorization rule for ${c.req.method} ${c.req.path}`,
        identity,
      );
    }
    if (rule.kind === "global_admin" && !authorizer.can(identity, "admin", ALL_PROJECTS)) {
      throw deny(403, "forbidden", "only an administrator of every project may do this", identity);
    }
    if (rule.kind === "project_admin" && authorizer.projectsFor(identity, "admin").length === 0) {
      throw deny(
        403,
        "forbidden",
        "only a project's administrator may manage its tokens",
        identity,
      );
    }
    if (rule.kind === "session") {
      const id = match?.params[0] ?? "";
      const session = UUID.test(id) ? await getSession(deps.prisma, id.toLowerCase()) : null;
      if (session) {
        noteAudit(c, { sessionId: session.id, project: session.project });
        if (!authorizer.can(identity, "get", session.project, session.id)) {
          throw deny(404, "not_found", `session ${id} not found`, identity);
        }
        if (!authorizer.can(identity, rule.action, session.project, session.id)) {
          throw deny(
            403,
            "forbidden",
            `you may not ${rule.action} sessions of project ${session.project}`,
            identity,
          );
        }
      }
    }
    if (rule.kind === "memory") {
      const id = match?.params[0] ?? "";
      const memory = await getMemory(deps.prisma, id.toLowerCase());
      if (memory) {
        noteAudit(c, { project: memory.project });
        if (!authorizer.can(identity, "get", memory.project)) {
          throw deny(404, "memory_not_found", `memory ${id} not found`, identity);
        }
        if (!authorizer.can(identity, rule.action, memory.project)) {
          throw deny(
            403,
            "forbidden",
            `you may not ${rule.action} memories of project ${memory.project}`,
            identity,
          );
        }
      }
    }
    await next();
    const status = c.res.status;
    if (c.req.method !== "GET" || DENIALS.has(status)) {
      recordAudit(deps, c, identity, address, DENIALS.has(status) ? "denied" : "allowed", status);
    }
  };
}

/**
 * The projects whose sessions the caller may see (undefined: all of them, authorization off),
 * narrowed to `wanted` when the request names one.
 */
export function visibleProjects(
  deps: IngestResources,
  c: Context,
  wanted?: string,
): string[] | undefined {
  const { authorizer } = deps.access;
  if (!authorizer.enabled) return wanted === undefined ? undefined : [wanted];
  const visible = authorizer.projectsFor(identityOf(c), "get");
  return wanted === undefined ? visible : visible.filter((p) => p === wanted);
}

/** 403 (audited by the guard) unless the caller may do the action in the project. */
export function requireAction(
  deps: IngestResources,
  c: Context,
  action: Parameters<IngestResources["access"]["authorizer"]["can"]>[1],
  project: string,
): void {
  noteAudit(c, { project });
  if (deps.access.authorizer.can(identityOf(c), action, project)) return;
  noteAudit(c, { reason: `may not ${action} in project ${project}` });
  throw new HttpError(403, "forbidden", `you may not ${action} in project ${project}`, {
    project,
  });
}

/** 400 `unknown_project` for a project that is not in `authorization.projects`. */
export function requireKnownProject(deps: IngestResources, project: string): void {
  const known = deps.access.authorizer.projects;
  if (known.includes(project)) return;
  throw new HttpError(
    400,
    "unknown_project",
    `unknown project '${project}'; known: ${known.join(", ")}`,
    {
      project,
      known_projects: [...known],
    },
  );
}
