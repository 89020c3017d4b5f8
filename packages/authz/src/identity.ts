import type { AuthorizationConfig } from "@tarsy/config";
import ipaddr from "ipaddr.js";
import { AuthError } from "./errors.ts";
import { API_TOKEN_PREFIX, bearerOf, hashApiToken, isApiTokenShape } from "./tokens.ts";

export type IdentitySource = "proxy" | "token" | "receiver" | "local" | "none";

/** Who is asking, as the request proved it. */
export interface Identity {
  /** The user name; `token:<name>` for an API token; `anonymous` for nobody. */
  user: string;
  email?: string;
  groups: string[];
  source: IdentitySource;
  /** An API token's binding: its role, in its one project. */
  token?: { id: string; name: string; project: string; role: string };
  /** The user's own bearer token as a trusted proxy passed it on (per-user MCP credentials). */
  userToken?: string;
}

/** What identity is read from: the peer's address and the request's headers. */
export interface RequestFacts {
  remoteAddress: string | undefined;
  header(name: string): string | undefined;
}

/** A stored API token as identity resolution needs it (from `@tarsy/db`). */
export interface StoredApiToken {
  id: string;
  name: string;
  project: string;
  role: string;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

export interface IdentityDeps {
  config: AuthorizationConfig;
  findToken(hash: string): Promise<StoredApiToken | null>;
  /** Records that the token was used (the store may skip it when it was used a moment ago). */
  touchToken(id: string): Promise<void>;
  now?: () => Date;
}

/** The cookie a browser may carry an API token in (a WebSocket cannot set a header). */
export const TOKEN_COOKIE = "tarsy_token";

/** oauth2-proxy's and kube-rbac-proxy's identity headers (the groups header per `scopes`). */
export function identityHeaders(config: Pick<AuthorizationConfig, "scopes">): string[] {
  return [
    "x-forwarded-user",
    "x-forwarded-email",
    "x-forwarded-preferred-username",
    `x-forwarded-${config.scopes.toLowerCase()}`,
    "x-forwarded-groups",
    "x-forwarded-access-token",
    "x-remote-user",
    "x-remote-group",
  ].filter((h, i, all) => all.indexOf(h) === i);
}

/** Matches peer addresses against `trusted_proxies` (IPv4-mapped IPv6 counts as IPv4). */
export function trustedProxyMatcher(entries: readonly string[]): (address?: string) => boolean {
  const ranges = entries.map((entry) =>
    entry.includes("/")
      ? ipaddr.parseCIDR(entry)
      : ([ipaddr.parse(entry), ipaddr.parse(entry).kind() === "ipv4" ? 32 : 128] as [
          ipaddr.IPv4 | ipaddr.IPv6,
          number,
        ]),
  );
  return (address) => {
    if (!address || !ipaddr.isValid(address)) return false;
    const ip = ipaddr.process(address);
    return ranges.some(([range, bits]) => ip.kind() === range.kind() && ip.match(range, bits));
  };
}

/**
 * The trusted-proxy rule on its own: identity headers from an address that is not a trusted
 * proxy throw `untrusted_identity`, whether or not authorization is on (the relay applies it
 * while authorization is off, when it identifies nobody).
 */
export function identityHeaderCheck(
  config: Pick<AuthorizationConfig, "scopes" | "trusted_proxies">,
): (facts: RequestFacts) => void {
  const headers = identityHeaders(config);
  const trusted = trustedProxyMatcher(config.trusted_proxies);
  return (facts) => {
    const present = headers.filter((h) => facts.header(h)?.trim());
    if (present.length > 0 && !trusted(facts.remoteAddress)) {
      throw new AuthError(
        "untrusted_identity",
        `identity headers (${present.join(", ")}) from ${facts.remoteAddress ?? "an unknown address"}, which is not a trusted proxy`,
      );
    }
  };
}

const list = (value: string | undefined): string[] =>
  (value ?? "")
    .split(",")
    .map((v) => v.trim())
    .filter(Boolean);

const cookieToken = (cookie: string | undefined): string | undefined =>
  new RegExp(`(?:^|;\\s*)${TOKEN_COOKIE}=([^;\\s]+)`).exec(cookie ?? "")?.[1];

/**
 * Identity of a request: an API token (`Authorization: Bearer tarsy_…` or the `tarsy_token`
 * cookie) wins; else the proxy's headers, accepted only from a trusted proxy (from anywhere
 * else they are a 401, whether or not authorization is on); else nobody: the one local user
 * while authorization is off, `anonymous` while it is on.
 */
export function createIdentityResolver(deps: IdentityDeps) {
  const { config } = deps;
  const checkHeaders = identityHeaderCheck(config);
  const now = deps.now ?? (() => new Date());

  async function fromToken(token: string): Promise<Identity> {
    if (!isApiTokenShape(token)) throw new AuthError("invalid_token", "malformed API token");
    const stored = await deps.findToken(hashApiToken(token));
    if (!stored) throw new AuthError("invalid_token", "unknown API token");
    if (stored.revokedAt) throw new AuthError("token_revoked", "the API token was revoked");
    if (stored.expiresAt && stored.expiresAt <= now()) {
      throw new AuthError("token_expired", "the API token has expired");
    }
    await deps.touchToken(stored.id);
    return {
      user: `token:${stored.name}`,
      groups: [],
      source: "token",
      token: { id: stored.id, name: stored.name, project: stored.project, role: stored.role },
    };
  }

  return async function resolveIdentity(facts: RequestFacts): Promise<Identity> {
    checkHeaders(facts);
    const bearer = bearerOf(facts.header("authorization"));
    const apiToken = bearer?.startsWith(API_TOKEN_PREFIX)
      ? bearer
      : cookieToken(facts.header("cookie"));
    if (apiToken) return fromToken(apiToken);

    // One proxy's headers, never a mix: oauth2-proxy sets its X-Forwarded-* but passes other
    // headers through, so a signed-in user's own X-Remote-Group must not add groups.
    const forwardedUser =
      facts.header("x-forwarded-user")?.trim() ||
      facts.header("x-forwarded-email")?.trim() ||
      facts.header("x-forwarded-preferred-username")?.trim();
    const user = forwardedUser || facts.header("x-remote-user")?.trim();
    if (user) {
      const groups = (
        forwardedUser
          ? list(facts.header(`x-forwarded-${config.scopes.toLowerCase()}`))
          : list(facts.header("x-remote-group"))
      ).filter((g, i, all) => all.indexOf(g) === i);
      const email = facts.header("x-forwarded-email")?.trim();
      const userToken = facts.header("x-forwarded-access-token")?.trim() || bearer;
      return {
        user,
        groups,
        source: "proxy",
        ...(email ? { email } : {}),
        ...(userToken ? { userToken } : {}),
      };
    }
    if (config.enabled && bearer) {
      throw new AuthError("invalid_token", "a bearer token that is not a TARSy API token");
    }
    return config.enabled
      ? { user: "anonymous", groups: [], source: "none" }
      : { user: "api-client", groups: [], source: "local" };
  };
}

export type IdentityResolver = ReturnType<typeof createIdentityResolver>;

/** The identity the Alertmanager receiver's credentials stand for. */
export function receiverIdentity(config: AuthorizationConfig): Identity {
  return { user: config.alertmanager.identity, groups: [], source: "receiver" };
}
