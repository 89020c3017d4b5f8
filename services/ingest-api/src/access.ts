import {
  AuthError,
  type Authorizer,
  createAuthorizer,
  createIdentityResolver,
  type Identity,
  type IdentityResolver,
} from "@tarsy/authz";
import type { AuthorizationConfig } from "@tarsy/config";
import { type DbClient, findApiTokenByHash, touchApiToken } from "@tarsy/db";
import type { Context } from "hono";
import { HttpError } from "./errors.ts";

/** Who a request is and what they may do: built once at start from `authorization`. */
export interface AccessControl {
  authorizer: Authorizer;
  resolveIdentity: IdentityResolver;
}

export async function createAccessControl(
  config: AuthorizationConfig,
  client: DbClient,
): Promise<AccessControl> {
  return {
    authorizer: await createAuthorizer(config),
    resolveIdentity: createIdentityResolver({
      config,
      findToken: (hash) => findApiTokenByHash(client, hash),
      touchToken: (id) => touchApiToken(client, id),
    }),
  };
}

/** The peer address of a request served by @hono/node-server. */
export function socketAddress(c: Context): string | undefined {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  return env?.incoming?.socket?.remoteAddress;
}

const IDENTITY = "identity";

/**
 * Resolves the caller once per request and keeps it on the context; a request whose identity
 * cannot be trusted is a 401 with the error shape (`guard` runs it before any API route).
 */
export async function resolveCaller(
  access: AccessControl,
  c: Context,
  remoteAddress: string | undefined,
): Promise<Identity> {
  try {
    const identity = await access.resolveIdentity({
      remoteAddress,
      header: (name) => c.req.header(name),
    });
    c.set(IDENTITY as never, identity as never);
    return identity;
  } catch (err) {
    if (!(err instanceof AuthError)) throw err;
    const code = err.code === "unauthenticated" ? "unauthorized" : err.code;
    throw new HttpError(401, code, err.message);
  }
}

/** The caller, as `resolveCaller` resolved it (the one local user where it did not run). */
export function identityOf(c: Context): Identity {
  return (
    (c.get(IDENTITY as never) as Identity | undefined) ?? {
      user: "api-client",
      groups: [],
      source: "local",
    }
  );
}
