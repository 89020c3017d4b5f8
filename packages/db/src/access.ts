/**
 * Authorization's rows: API tokens (stored as their SHA-256, never the token) and the
 * append-only audit log (a trigger refuses UPDATE and DELETE).
 */
import type { DbClient } from "./client.ts";
import type { ApiToken, AuditEntry } from "./generated/prisma/client.ts";
import { isRowId } from "./ids.ts";

/**
 * The project of each session named, by id (soft-deleted sessions too: a session's project
 * never changes). Ids with no row, or not shaped like a row id, are absent from the map.
 */
export async function getSessionProjects(
  client: DbClient,
  ids: readonly string[],
): Promise<Map<string, string>> {
  const wanted = [...new Set(ids.filter(isRowId))];
  if (wanted.length === 0) return new Map();
  const rows = await client.alertSession.findMany({
    where: { id: { in: wanted } },
    select: { id: true, project: true },
  });
  return new Map(rows.map((row) => [row.id, row.project]));
}

export interface ApiTokenInput {
  readonly name: string;
  readonly tokenHash: string;
  readonly project: string;
  readonly role: string;
  readonly createdBy: string;
  readonly expiresAt: Date | null;
}

export function createApiToken(client: DbClient, input: ApiTokenInput): Promise<ApiToken> {
  return client.apiToken.create({ data: { ...input } });
}

export function findApiTokenByHash(client: DbClient, tokenHash: string): Promise<ApiToken | null> {
  return client.apiToken.findUnique({ where: { tokenHash } });
}

export function getApiToken(client: DbClient, id: string): Promise<ApiToken | null> {
  return client.apiToken.findUnique({ where: { id } });
}

/** Records a use of the token, at most once a minute (a busy client writes no row per call). */
export async function touchApiToken(client: DbClient, id: string, now = new Date()): Promise<void> {
  await client.apiToken.updateMany({
    where: {
      id,
      OR: [{ lastUsedAt: null }, { lastUsedAt: { lt: new Date(now.getTime() - 60_000) } }],
    },
    data: { lastUsedAt: now },
  });
}

/** Newest first; only those of the given projects when `projects` is set. */
export function listApiTokens(client: DbClient, projects?: readonly string[]): Promise<ApiToken[]> {
  return client.apiToken.findMany({
    where: projects ? { project: { in: [...projects] } } : {},
    orderBy: { createdAt: "desc" },
  });
}

/** Revokes a live token; false when it was revoked already or does not exist. */
export async function revokeApiToken(
  client: DbClient,
  id: string,
  revokedBy: string,
  now = new Date(),
): Promise<boolean> {
  const { count } = await client.apiToken.updateMany({
    where: { id, revokedAt: null },
    data: { revokedAt: now, revokedBy },
  });
  return count === 1;
}

export interface AuditInput {
  readonly actor: string;
  readonly identitySource: string;
  readonly action: string;
  readonly outcome: "allowed" | "denied";
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly sessionId?: string | null;
  readonly project?: string | null;
  readonly remoteAddr?: string | null;
  readonly reason?: string | null;
}

export async function appendAudit(client: DbClient, input: AuditInput): Promise<void> {
  await client.auditEntry.create({ data: { ...input } });
}

export interface AuditQuery {
  readonly limit: number;
  /** Entries older than this id (the previous page's last id). */
  readonly before?: bigint;
  readonly actor?: string;
  readonly sessionId?: string;
  readonly outcome?: "allowed" | "denied";
}

/** Newest first. */
export function listAudit(client: DbClient, query: AuditQuery): Promise<AuditEntry[]> {
  return client.auditEntry.findMany({
    where: {
      ...(query.before !== undefined ? { id: { lt: query.before } } : {}),
      ...(query.actor ? { actor: query.actor } : {}),
      ...(query.sessionId ? { sessionId: query.sessionId } : {}),
      ...(query.outcome ? { outcome: query.outcome } : {}),
    },
    orderBy: { id: "desc" },
    take: query.limit,
  });
}
