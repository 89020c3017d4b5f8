import type { Identity } from "@tarsy/authz";
import { appendAudit } from "@tarsy/db";
import type { Context } from "hono";
import type { IngestResources } from "../deps.ts";

/** What the audit entry of a request says beside who, how and the status. */
export interface AuditNote {
  action: string;
  sessionId?: string;
  project?: string;
  reason?: string;
}

const NOTE = "auditNote";

/** The note of this request (the guard starts it; routes add the session and project). */
export function auditNote(c: Context): AuditNote {
  let note = c.get(NOTE as never) as AuditNote | undefined;
  if (!note) {
    note = { action: "get" };
    c.set(NOTE as never, note as never);
  }
  return note;
}

/** Adds what a route learned (the created session, the project) to the request's entry. */
export function noteAudit(c: Context, more: Partial<AuditNote>): void {
  Object.assign(auditNote(c), more);
}

/**
 * Appends the request's audit entry without waiting for it: a denial is never held up by the
 * audit write, and a failed write is logged.
 */
export function recordAudit(
  deps: IngestResources,
  c: Context,
  identity: Identity | undefined,
  remoteAddr: string | undefined,
  outcome: "allowed" | "denied",
  status: number,
): void {
  const note = auditNote(c);
  const entry = {
    actor: identity?.user ?? "anonymous",
    identitySource: identity?.source ?? "none",
    action: note.action,
    outcome,
    method: c.req.method,
    path: c.req.path,
    status,
    sessionId: note.sessionId ?? null,
    project: note.project ?? null,
    remoteAddr: remoteAddr ?? null,
    reason: note.reason ?? null,
  };
  appendAudit(deps.prisma, entry).catch((err: unknown) =>
    deps.logger.error({ err, audit: entry }, "audit entry not written"),
  );
}
