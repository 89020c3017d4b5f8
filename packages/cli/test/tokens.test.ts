import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { newApiToken } from "@tarsy/authz";
import { ApiTokenListResponseSchema } from "@tarsy/contracts";
import { createApiToken, createDb, type Db } from "@tarsy/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootSystem, DEMO_ALERT, ROOT, type System, tarsy } from "./support.ts";

/** The demo's chains with authorization on: root administers both projects, tokens act in one. */
const AUTHORIZATION = `
authorization:
  enabled: true
  projects: [alpha, beta]
  default_project: alpha
  trusted_proxies: ["127.0.0.1", "::1"]
  policy: |
    g, root, admin
    p, admin, sessions, *, */*
    p, operator-alpha, sessions, get, alpha/*
    p, operator-alpha, sessions, create, alpha/*
`;

interface TokenJson {
  id: string;
  name: string;
  project: string;
  role: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

/** The demo configuration plus the authorization section, in a directory of its own. */
function authorizedDemoConfig(): string {
  const demo = resolve(ROOT, "deploy/demo");
  const dir = mkdtempSync(join(tmpdir(), "tarsy-cli-authz-"));
  writeFileSync(
    join(dir, "tarsy.yaml"),
    `${readFileSync(join(demo, "tarsy.yaml"), "utf8")}${AUTHORIZATION}`,
  );
  copyFileSync(join(demo, "llm-providers.yaml"), join(dir, "llm-providers.yaml"));
  return dir;
}

/**
 * `tarsy token create|list|revoke` and `TARSY_TOKEN` (HTTP and the WebSocket) against the
 * whole system booted as processes with authorization enabled. One stack for the file.
 */
describe("tarsy with authorization enabled", () => {
  let sys: System;
  let db: Db;
  let configDir: string;
  /** The environment of the admin: identity headers from a trusted (loopback) address. */
  let admin: Record<string, string>;
  const withToken = (token: string) => ({ ...sys.env, TARSY_TOKEN: token });

  beforeAll(async () => {
    configDir = authorizedDemoConfig();
    sys = await bootSystem({ configDir, replicas: { "agent-runner": 1 } });
    db = createDb({ url: sys.database.url, poolSize: 2 });
    admin = { ...sys.env, TARSY_USER: "root" };
  }, 240_000);
  afterAll(async () => {
    await db?.close();
    await sys?.stop();
    if (configDir) rmSync(configDir, { recursive: true, force: true });
  }, 60_000);

  async function createToken(): Promise<{ token: string; id: string; stderr: string }> {
    const created = await tarsy(
      ["token", "create", "--project", "alpha", "--role", "operator-alpha", "--ttl", "30d"],
      { env: admin },
    );
    expect(created.code).toBe(0);
    const token = created.stdout.trim();
    expect(token).toMatch(/^tarsy_\S{20,}$/);
    // The token is stdout's only line; what it is goes to stderr.
    expect(created.stdout).toBe(`${token}\n`);
    const id = /^token (\S+) /.exec(created.stderr)?.[1];
    if (!id) throw new Error(`no token id in ${created.stderr}`);
    return { token, id, stderr: created.stderr };
  }

  /** The table, and `--output json` (or its alias `--json`) with what the API answers. */
  const listed = async (flag: "--json" | "--output" = "--output") => {
    const [table, json] = await Promise.all([
      tarsy(["token", "list"], { env: admin }),
      tarsy(["token", "list", ...(flag === "--json" ? ["--json"] : ["--output", "json"])], {
        env: admin,
      }),
    ]);
    expect(table.code).toBe(0);
    expect(json.code).toBe(0);
    return {
      table: table.stdout,
      raw: JSON.parse(json.stdout) as unknown,
      tokens: (JSON.parse(json.stdout) as { tokens: TokenJson[] }).tokens,
    };
  };

  it("an admin creates a token, printed once; list never shows it and sees its last use; it works until revoked, then exits 1 with the API's reason", async () => {
    const before = Date.now();
    const { token, id, stderr } = await createToken();
    const expires = /expires (\S+)\); it is not shown again\n$/.exec(stderr)?.[1];
    expect(stderr).toBe(
      `token ${id} (operator-alpha@alpha: operator-alpha in alpha, expires ${expires}); it is not shown again\n`,
    );
    const thirtyDays = 30 * 24 * 3600_000;
    expect(Date.parse(expires ?? "")).toBeGreaterThanOrEqual(before + thirtyDays - 1_000);
    expect(Date.parse(expires ?? "")).toBeLessThanOrEqual(Date.now() + thirtyDays + 1_000);

    const fresh = await listed();
    const answer = await fetch(`${sys.env.TARSY_API_URL}/api/v1/tokens`, {
      headers: { "x-forwarded-user": "root" },
    });
    expect(fresh.raw).toEqual(ApiTokenListResponseSchema.parse(await answer.json()));
    expect(fresh.table).toMatch(
      new RegExp(
        `^${id} {2}operator-alpha@alpha {2}alpha {2}operator-alpha {2}live {2}expires ${expires} {2}last used never {2}by root$`,
        "m",
      ),
    );
    expect(fresh.table).not.toContain(token);
    expect(JSON.stringify(fresh.tokens)).not.toContain(token);
    expect(fresh.tokens.find((t) => t.id === id)).toMatchObject({ last_used_at: null });

    // With TARSY_TOKEN alone (no user header), the token is the caller.
    const usedFrom = Date.now();
    const submitted = await tarsy(["alert", "submit", "-"], {
      env: withToken(token),
      stdin: JSON.stringify(DEMO_ALERT),
    });
    expect(submitted.stderr).toBe("");
    expect(submitted.code).toBe(0);
    const sessionId = submitted.stdout.trim();
    const show = await tarsy(["session", "show", sessionId, "--json"], { env: withToken(token) });
    expect(show.code).toBe(0);
    expect(JSON.parse(show.stdout).session).toMatchObject({ id: sessionId, project: "alpha" });

    const used = (await listed("--json")).tokens.find((t) => t.id === id);
    expect(used?.last_used_at).not.toBeNull();
    expect(Date.parse(used?.last_used_at ?? "")).toBeGreaterThanOrEqual(usedFrom - 1_000);
    expect(Date.parse(used?.last_used_at ?? "")).toBeLessThanOrEqual(Date.now() + 1_000);
    expect((await listed()).table).toMatch(
      new RegExp(`^${id} .* live .* last used ${used?.last_used_at} {2}by root$`, "m"),
    );

    const revoked = await tarsy(["token", "revoke", id], { env: admin });
    expect(revoked.stderr).toBe("");
    expect([revoked.code, revoked.stdout]).toEqual([0, `token ${id} revoked\n`]);
    expect((await listed()).table).toMatch(new RegExp(`^${id} .* revoked {2}expires `, "m"));

    const refused = await tarsy(["session", "show", sessionId], { env: withToken(token) });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toMatch(/^tarsy session show: API error 401 token_revoked: .+\n$/);
    const refusedSubmit = await tarsy(["alert", "submit", "-"], {
      env: withToken(token),
      stdin: JSON.stringify(DEMO_ALERT),
    });
    expect(refusedSubmit.code).toBe(1);
    expect(refusedSubmit.stderr).toMatch(/^tarsy alert submit: API error 401 token_revoked: /);

    const again = await tarsy(["token", "revoke", id], { env: admin });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^tarsy token revoke: API error 409 \w+: .*revoked already\n$/);
  }, 120_000);

  it("a malformed, an expired and no token at all are refused with the API's reason and exit 1; a token cannot make tokens", async () => {
    const malformed = await tarsy(["token", "list"], { env: withToken("tarsy_short") });
    expect(malformed.code).toBe(1);
    expect(malformed.stdout).toBe("");
    expect(malformed.stderr).toMatch(/^tarsy token list: API error 401 invalid_token: .+\n$/);

    const { token, hash } = newApiToken();
    await createApiToken(db.prisma, {
      name: "expired",
      tokenHash: hash,
      project: "alpha",
      role: "operator-alpha",
      createdBy: "test",
      expiresAt: new Date(Date.now() - 1_000),
    });
    const expired = await tarsy(["alert", "submit", "-"], {
      env: withToken(token),
      stdin: JSON.stringify(DEMO_ALERT),
    });
    expect(expired.code).toBe(1);
    expect(expired.stdout).toBe("");
    expect(expired.stderr).toMatch(/^tarsy alert submit: API error 401 token_expired: .+\n$/);

    const nobody = await tarsy(["session", "show", "no-such-session"], { env: sys.env });
    expect(nobody.code).toBe(1);
    expect(nobody.stderr).toMatch(/^tarsy session show: API error 401 \w+: .+\n$/);

    // An operator's token may submit in alpha, not administer it.
    const { token: operator } = await createToken();
    const escalate = await tarsy(
      ["token", "create", "--project", "alpha", "--role", "operator-alpha"],
      { env: withToken(operator) },
    );
    expect(escalate.code).toBe(1);
    expect(escalate.stdout).toBe("");
    expect(escalate.stderr).toMatch(/^tarsy token create: API error 403 forbidden: .+\n$/);
  }, 60_000);

  it("session watch sends TARSY_TOKEN: a token of alpha streams its session to the end; without a token, or with a bad one, the relay refuses and it exits 1", async () => {
    const { token } = await createToken();
    const submitted = await tarsy(["alert", "submit", "-"], {
      env: withToken(token),
      stdin: JSON.stringify(DEMO_ALERT),
    });
    expect(submitted.code).toBe(0);
    const sessionId = submitted.stdout.trim();

    const watched = await tarsy(["session", "watch", sessionId], {
      env: withToken(token),
      timeoutMs: 150_000,
    });
    expect(watched.stderr).toBe("");
    expect(watched.code).toBe(0);
    expect(watched.stdout).toContain("▶ stage 1 triage: started");
    expect(watched.stdout).toContain("FINAL ANALYSIS:");
    expect(watched.stdout.trimEnd().endsWith("● session completed")).toBe(true);

    // Refused at the upgrade: said once, as the relay says it, not retried.
    const anonymous = await tarsy(["session", "watch", sessionId], { env: sys.env });
    expect(anonymous.code).toBe(1);
    expect(anonymous.stdout).toBe("");
    expect(anonymous.stderr).toBe(
      `tarsy session watch: the TARSy WebSocket at ${sys.stack.wsUrl} refused the connection: 401 unauthorized: authentication required\n`,
    );
    const malformed = await tarsy(["session", "watch", sessionId], {
      env: withToken("tarsy_short"),
    });
    expect(malformed.code).toBe(1);
    expect(malformed.stderr).toMatch(
      /^tarsy session watch: the TARSy WebSocket at \S+ refused the connection: 401 invalid_token: .+\n$/,
    );
    // chat reads the session over HTTP before it follows the WebSocket: refused there, nothing asked.
    const chat = await tarsy(["chat", sessionId, "why?"], { env: withToken("tarsy_short") });
    expect(chat.code).toBe(1);
    expect(chat.stderr).toMatch(/^tarsy chat: API error 401 invalid_token: /);
  }, 200_000);
});
