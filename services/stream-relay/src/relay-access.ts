import { AuthError, createAuthorizer, createIdentityResolver } from "@tarsy/authz";
import type { AuthorizationConfig } from "@tarsy/config";
import {
  appendAudit,
  type DbClient,
  findApiTokenByHash,
  getSessionProjects,
  touchApiToken,
} from "@tarsy/db";
import type { Logger } from "@tarsy/runtime";
import type { RelayAccess } from "./access.ts";
import { createSessionProjects } from "./session-projects.ts";

/**
 * The relay's access control from the `authorization` section, over the database (API tokens,
 * each session's project). main loads this module only while authorization is on.
 */
export async function createRelayAccess(
  config: AuthorizationConfig,
  client: DbClient,
  logger?: Logger,
): Promise<RelayAccess> {
  const resolveIdentity = createIdentityResolver({
    config,
    findToken: (hash) => findApiTokenByHash(client, hash),
    touchToken: (id) => touchApiToken(client, id),
  });
  return {
    auditRefusal(refusal) {
      const entry = {
        actor: "anonymous",
        identitySource: "none",
        action: "get",
        outcome: "denied" as const,
        method: "GET",
        path: refusal.path,
        status: refusal.status,
        remoteAddr: refusal.remoteAddress ?? null,
        reason: `${refusal.code}: ${refusal.message}`,
      };
      appendAudit(client, entry).catch((err: unknown) =>
        logger?.error({ err, audit: entry }, "audit entry not written"),
      );
    },
    authorizer: await createAuthorizer(config),
    projects: createSessionProjects({ lookup: (ids) => getSessionProjects(client, ids) }),
    async identify(req) {
      try {
        const identity = await resolveIdentity({
          remoteAddress: req.socket.remoteAddress,
          header: (name) => {
            const value = req.headers[name.toLowerCase()];
            return Array.isArray(value) ? value.join(", ") : value;
          },
        });
        // With authorization on, a connection must belong to someone.
        if (identity.source === "none") {
          return { ok: false, code: "unauthorized", message: "authentication required" };
        }
        return { ok: true, identity };
      } catch (err) {
        if (!(err instanceof AuthError)) throw err;
        const code = err.code === "unauthenticated" ? "unauthorized" : err.code;
        return { ok: false, code, message: err.message };
      }
    },
  };
}
