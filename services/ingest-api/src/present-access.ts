import type { ApiTokenInfo, AuditEntryResponse } from "@tarsy/contracts";
import type { ApiToken, AuditEntry } from "@tarsy/db";
import { iso } from "./present.ts";

/** A token's metadata: never the token or its hash. */
export function presentToken(t: ApiToken): ApiTokenInfo {
  return {
    id: t.id,
    name: t.name,
    project: t.project,
    role: t.role,
    created_by: t.createdBy,
    created_at: t.createdAt.toISOString(),
    expires_at: iso(t.expiresAt),
    revoked_at: iso(t.revokedAt),
    last_used_at: iso(t.lastUsedAt),
  };
}

export function presentAudit(e: AuditEntry): AuditEntryResponse {
  return {
    id: e.id.toString(),
    at: e.at.toISOString(),
    actor: e.actor,
    identity_source: e.identitySource,
    action: e.action,
    outcome: e.outcome === "denied" ? "denied" : "allowed",
    method: e.method,
    path: e.path,
    status: e.status,
    session_id: e.sessionId,
    project: e.project,
    remote_addr: e.remoteAddr,
    reason: e.reason,
  };
}
