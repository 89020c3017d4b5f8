import type { AuthorizationConfig } from "@tarsy/config";
import { describe, expect, it } from "vitest";
import {
  AuthError,
  createIdentityResolver,
  createTokenSeal,
  newApiToken,
  parseSealKey,
  type RequestFacts,
  type StoredApiToken,
  trustedProxyMatcher,
} from "../src/index.ts";

const config: AuthorizationConfig = {
  enabled: true,
  scopes: "groups",
  policy_default: "",
  projects: ["prod"],
  default_project: "prod",
  trusted_proxies: ["10.0.0.0/8", "127.0.0.1", "fd00::/8"],
  alertmanager: { identity: "alertmanager", project: "prod" },
  user_token_ttl_ms: 60_000,
  policy: "",
};

const facts = (
  remoteAddress: string | undefined,
  headers: Record<string, string>,
): RequestFacts => ({
  remoteAddress,
  header: (name) => headers[name.toLowerCase()],
});

function rig(
  tokens: Record<string, StoredApiToken> = {},
  overrides: Partial<AuthorizationConfig> = {},
) {
  const touched: string[] = [];
  const resolve = createIdentityResolver({
    config: { ...config, ...overrides },
    findToken: async (hash) => tokens[hash] ?? null,
    touchToken: async (id) => {
      touched.push(id);
    },
    now: () => new Date("2026-11-25T12:00:00Z"),
  });
  return { resolve, touched };
}

const code = async (promise: Promise<unknown>) => {
  try {
    await promise;
  } catch (err) {
    if (err instanceof AuthError) return err.code;
    throw err;
  }
  return "resolved";
};

describe("identity", () => {
  it("reads oauth2-proxy's and kube-rbac-proxy's headers from a trusted proxy", async () => {
    const { resolve } = rig();
    expect(
      await resolve(
        facts("10.1.2.3", {
          "x-forwarded-user": "alice",
          "x-forwarded-email": "alice@example.com",
          "x-forwarded-groups": "team-sre, oncall",
          "x-forwarded-access-token": "eyJ.user.token",
        }),
      ),
    ).toEqual({
      user: "alice",
      email: "alice@example.com",
      groups: ["team-sre", "oncall"],
      source: "proxy",
      userToken: "eyJ.user.token",
    });
    expect(
      await resolve(
        facts("::ffff:127.0.0.1", { "x-remote-user": "system:sa:ci", "x-remote-group": "a,b" }),
      ),
    ).toMatchObject({ user: "system:sa:ci", groups: ["a", "b"], source: "proxy" });
  });

  it("takes one proxy's headers: behind oauth2-proxy, X-Remote-User and -Group add nothing", async () => {
    const { resolve } = rig();
    expect(
      await resolve(
        facts("10.1.2.3", {
          "x-forwarded-user": "alice",
          "x-forwarded-groups": "team-sre",
          "x-remote-user": "system:admin",
          "x-remote-group": "platform-admins",
        }),
      ),
    ).toMatchObject({ user: "alice", groups: ["team-sre"], source: "proxy" });
  });

  it("refuses identity headers from anywhere else, on or off", async () => {
    for (const enabled of [true, false]) {
      const { resolve } = rig({}, { enabled });
      expect(await code(resolve(facts("192.168.1.9", { "x-forwarded-user": "root" })))).toBe(
        "untrusted_identity",
      );
      expect(await code(resolve(facts("11.0.0.1", { "x-remote-group": "admins" })))).toBe(
        "untrusted_identity",
      );
      expect(await code(resolve(facts(undefined, { "x-forwarded-email": "a@b.c" })))).toBe(
        "untrusted_identity",
      );
    }
  });

  it("matches addresses and CIDR blocks, IPv4-mapped IPv6 as IPv4", () => {
    const trusted = trustedProxyMatcher(["10.0.0.0/8", "127.0.0.1", "fd00::/8"]);
    expect(trusted("10.255.0.1")).toBe(true);
    expect(trusted("::ffff:10.0.0.1")).toBe(true);
    expect(trusted("127.0.0.1")).toBe(true);
    expect(trusted("127.0.0.2")).toBe(false);
    expect(trusted("fd12::1")).toBe(true);
    expect(trusted("fe80::1")).toBe(false);
    expect(trusted("not-an-ip")).toBe(false);
    expect(trusted(undefined)).toBe(false);
  });

  it("accepts a live API token from anywhere, and says why a bad one is refused", async () => {
    const live = newApiToken();
    const revoked = newApiToken();
    const expired = newApiToken();
    const row = (id: string, extra: Partial<StoredApiToken> = {}): StoredApiToken => ({
      id,
      name: id,
      project: "prod",
      role: "role:sre",
      expiresAt: null,
      revokedAt: null,
      ...extra,
    });
    const { resolve, touched } = rig({
      [live.hash]: row("ci", { expiresAt: new Date("2026-12-25T00:00:00Z") }),
      [revoked.hash]: row("old", { revokedAt: new Date("2026-11-01T00:00:00Z") }),
      [expired.hash]: row("gone", { expiresAt: new Date("2026-11-25T11:59:59Z") }),
    });
    expect(await resolve(facts("203.0.113.7", { authorization: `Bearer ${live.token}` }))).toEqual({
      user: "token:ci",
      groups: [],
      source: "token",
      token: { id: "ci", name: "ci", project: "prod", role: "role:sre" },
    });
    expect(touched).toEqual(["ci"]);
    // The cookie a browser WebSocket carries.
    expect(
      await resolve(facts("203.0.113.7", { cookie: `theme=dark; tarsy_token=${live.token}` })),
    ).toMatchObject({ source: "token" });
    const auth = (t: string) => facts("203.0.113.7", { authorization: `Bearer ${t}` });
    expect(await code(resolve(auth(revoked.token)))).toBe("token_revoked");
    expect(await code(resolve(auth(expired.token)))).toBe("token_expired");
    expect(await code(resolve(auth(newApiToken().token)))).toBe("invalid_token");
    expect(await code(resolve(auth("tarsy_short")))).toBe("invalid_token");
    expect(await code(resolve(auth("eyJ.some.jwt")))).toBe("invalid_token");
  });

  it("is anonymous with nothing while on, the one local user while off", async () => {
    expect(await rig().resolve(facts("203.0.113.7", {}))).toEqual({
      user: "anonymous",
      groups: [],
      source: "none",
    });
    expect(await rig({}, { enabled: false }).resolve(facts("203.0.113.7", {}))).toEqual({
      user: "api-client",
      groups: [],
      source: "local",
    });
  });
});

describe("the token seal", () => {
  const key = parseSealKey(Buffer.alloc(32, 7).toString("base64"));

  it("opens what it sealed, never shows the token, and refuses a changed value", () => {
    const seal = createTokenSeal(key);
    const sealed = seal.seal("eyJ.user.token");
    expect(sealed).not.toContain("eyJ");
    expect(seal.seal("eyJ.user.token")).not.toBe(sealed);
    expect(seal.open(sealed)).toBe("eyJ.user.token");
    const parts = sealed.split(".");
    const body = Buffer.from(parts[3] ?? "", "base64url");
    body[0] = (body[0] ?? 0) ^ 1;
    parts[3] = body.toString("base64url");
    expect(() => seal.open(parts.join("."))).toThrow();
    const other = createTokenSeal(parseSealKey(Buffer.alloc(32, 8).toString("base64")));
    expect(() => other.open(sealed)).toThrow();
  });

  it("wants a 32-byte key", () => {
    expect(() => parseSealKey(Buffer.alloc(16).toString("base64"))).toThrow(/32 bytes/);
  });
});
