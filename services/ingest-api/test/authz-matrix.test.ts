import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { newApiToken } from "@tarsy/authz";
import { createApiToken, createMemories } from "@tarsy/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/app.ts";
import { type RouteRule, ruleFor } from "../src/authz/rules.ts";
import { seedSession } from "./seed.ts";
import {
  AUTHZ_CONFIG_DIR,
  type ErrorBody,
  FIXTURE_WEBHOOK,
  type Harness,
  startHarness,
} from "./support.ts";

/**
 * Every route of the app × every kind of caller, with the status the route table says. The
 * routes come from the Hono app itself: a route without a rule fails the test.
 */

const PEER = "x-test-peer";
const WEBHOOK_TOKEN = "am-webhook-secret-0123456789";
type Caller =
  | "nobody"
  | "viewer-a"
  | "operator-a"
  | "admin-a"
  | "admin"
  | "default-role"
  | "token-a"
  | "receiver"
  | "untrusted";
const CALLERS: Caller[] = [
  "nobody",
  "viewer-a",
  "operator-a",
  "admin-a",
  "admin",
  "default-role",
  "token-a",
  "receiver",
  "untrusted",
];
const proxy = (user: string, group?: string) => ({
  "x-forwarded-user": user,
  ...(group ? { "x-forwarded-groups": group } : {}),
});

let h: Harness;
let configDir: string;
let sessionA: string;
let sessionB: string;
let headersOf: Record<Caller, Record<string, string>>;

beforeAll(async () => {
  const staticDir = mkdtempSync(join(tmpdir(), "tarsy-dashboard-"));
  writeFileSync(join(staticDir, "index.html"), "<!doctype html><title>TARSy</title>");
  // The fixture with a policy_default role: an identified caller of no group is a viewer of A.
  configDir = mkdtempSync(join(tmpdir(), "tarsy-authz-matrix-"));
  cpSync(AUTHZ_CONFIG_DIR, configDir, { recursive: true });
  const file = join(configDir, "tarsy.yaml");
  const text = readFileSync(file, "utf8");
  const withDefault = text.replace("  policy: |\n", "  policy_default: viewer-a\n  policy: |\n");
  expect(withDefault).not.toBe(text);
  writeFileSync(file, withDefault);
  h = await startHarness({
    configDir,
    peerHeader: PEER,
    settings: { staticDir, alertmanager: { auth: { kind: "bearer", token: WEBHOOK_TOKEN } } },
  });
  const seed = (project: string) =>
    seedSession(h.db.prisma, {
      alertType: "KubePodCrashLooping",
      chainId: "crashloop-chain",
      project,
    });
  sessionA = (await seed("team-a")).id;
  sessionB = (await seed("team-b")).id;
  const { token, hash } = newApiToken();
  await createApiToken(h.db.prisma, {
    name: "ci-a",
    tokenHash: hash,
    project: "team-a",
    role: "operator-a",
    createdBy: "test",
    expiresAt: null,
  });
  headersOf = {
    nobody: {},
    "viewer-a": proxy("vera", "viewers-a"),
    "operator-a": proxy("olga", "operators-a"),
    "admin-a": proxy("ada", "admins-a"),
    admin: proxy("adam", "admins"),
    "default-role": proxy("dora"),
    "token-a": { authorization: `Bearer ${token}` },
    receiver: { authorization: `Bearer ${WEBHOOK_TOKEN}` },
    untrusted: { ...proxy("adam", "admins"), [PEER]: "203.0.113.9" },
  };
});
afterAll(async () => {
  await h?.close();
  if (configDir) rmSync(configDir, { recursive: true, force: true });
});

type Expected = 401 | 403 | 404 | "allowed";
type Identified = Exclude<Caller, "nobody" | "untrusted" | "receiver">;

/** What each identified caller may do in team-a; only `admin` may do it in every project. */
const MAY: Record<Identified, string[]> = {
  "viewer-a": ["get"],
  "default-role": ["get"],
  "operator-a": ["get", "create", "update", "cancel", "delete"],
  "token-a": ["get", "create", "update", "cancel", "delete"],
  "admin-a": ["*"],
  admin: ["*"],
};
const GLOBAL: ReadonlySet<Caller> = new Set(["admin"]);

/**
 * The status the rule gives a caller (`allowed`: neither 401 nor 403, nor the session's 404,
 * nor a 5xx: a route that breaks is no proof that it let the caller in). `foreign`: the
 * route's session is team-b's, which only the global admin may see.
 */
function expected(rule: RouteRule, caller: Caller, foreign = false): Expected {
  // The webhook's own bearer, or an API token that may create, gets through; nobody else.
  if (rule.kind === "receiver") {
    return caller === "token-a" || caller === "receiver" ? "allowed" : 401;
  }
  if (rule.kind === "public") return "allowed";
  // The webhook's bearer is no identity anywhere else (not a TARSy API token).
  if (caller === "nobody" || caller === "untrusted" || caller === "receiver") return 401;
  const allows = (action: string) => MAY[caller].includes(action) || MAY[caller].includes("*");
  switch (rule.kind) {
    case "identified":
    case "list":
    // Bulk review answers 200 with a per-session result (forbidden, not_found) for each.
    case "sessions":
      return "allowed";
    case "session":
      if (foreign && !GLOBAL.has(caller)) return 404;
      return allows(rule.action) ? "allowed" : 403;
    case "memory":
      return allows(rule.action) ? "allowed" : 403;
    case "submit":
      return allows("create") ? "allowed" : 403;
    case "project_admin":
      return allows("admin") ? "allowed" : 403;
    case "global_admin":
      return GLOBAL.has(caller) ? "allowed" : 403;
    default:
      return rule satisfies never;
  }
}

/** A team-a memory of its own for each call (a delete leaves none for the next caller). */
async function seedMemory(): Promise<string> {
  const [memory] = await createMemories(
    h.db.prisma,
    { project: "team-a", sourceSessionId: sessionA, alertType: null, chainId: null },
    [
      {
        content: "check the pod's memory limit first",
        category: "procedural",
        valence: "positive",
        confidence: 0.7,
        embedding: [],
        embeddingModel: null,
      },
    ],
  );
  if (!memory) throw new Error("no memory");
  return memory.id;
}

/** A concrete request for a route pattern. */
async function requestFor(
  method: string,
  path: string,
  session = sessionA,
): Promise<{ url: string; body?: unknown }> {
  const id = path.startsWith("/api/v1/tokens")
    ? crypto.randomUUID()
    : path.startsWith("/api/v1/memories/")
      ? await seedMemory()
      : session;
  const url = path
    .replace(":id", id)
    .replace(":interactionId", crypto.randomUUID())
    .replace(":seq", "999999")
    .replace(":group", "needs_review")
    .replace(/^\/\*$/, "/index.html");
  if (method === "PATCH" && path === "/api/v1/memories/:id")
    return { url, body: { deprecated: true } };
  if (method === "PATCH" && path === "/api/v1/sessions/review") {
    return { url, body: { session_ids: [session], action: "claim" } };
  }
  if (method !== "POST") return { url };
  if (path === "/api/v1/alerts/alertmanager") {
    return { url, body: JSON.parse(readFileSync(FIXTURE_WEBHOOK, "utf8")) };
  }
  if (path === "/api/v1/alerts")
    return { url, body: { alert_type: "KubePodCrashLooping", data: "x" } };
  if (path.endsWith("/chat/messages")) return { url, body: { content: "why?" } };
  if (path === "/api/v1/tokens") {
    return { url, body: { name: "m", project: "team-a", role: "viewer-a", ttl: "1d" } };
  }
  return { url };
}

/** One request; the body parsed when it is JSON (metrics and the dashboard are not). */
async function call(
  method: string,
  url: string,
  headers: Record<string, string>,
  body: unknown,
): Promise<{ status: number; body?: ErrorBody }> {
  const res = await fetch(`${h.url}${url}`, {
    method,
    headers: body === undefined ? headers : { ...headers, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  const isJson = res.headers.get("content-type")?.includes("json");
  return { status: res.status, ...(isJson && text ? { body: JSON.parse(text) } : {}) };
}

describe("authorization matrix", () => {
  it("every route of the app has a rule in the table", () => {
    const routes = createApp(h.deps).routes.filter((r) => r.method !== "ALL");
    const missing = routes.filter((r) => ruleFor(r.method, r.path)?.entry.path !== r.path);
    expect(missing.map((r) => `${r.method} ${r.path}`)).toEqual([]);
    expect(routes.length).toBeGreaterThan(20);
  });

  it("every route × caller answers as its rule says", async () => {
    const routes = createApp(h.deps).routes.filter((r) => r.method !== "ALL");
    const seen = new Set<string>();
    const failures: string[] = [];
    for (const route of routes) {
      const key = `${route.method} ${route.path}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const rule = ruleFor(route.method, route.path)?.entry.rule;
      if (!rule) throw new Error(`no rule for ${key}`);
      for (const caller of CALLERS) {
        const { url, body } = await requestFor(route.method, route.path);
        const res = await call(route.method, url, headersOf[caller], body);
        const want = expected(rule, caller);
        const got = res.status;
        const sessionHidden =
          got === 404 &&
          (res.body?.error?.message === `session ${sessionA} not found` ||
            res.body?.error?.code === "memory_not_found");
        const ok =
          want === "allowed"
            ? got !== 401 && got !== 403 && !sessionHidden && got > 0 && got < 500
            : got === want;
        if (!ok) failures.push(`${key} as ${caller}: ${got}, expected ${want}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it("every session route × caller, on another project's session: 404 for all but the global admin", async () => {
    const routes = createApp(h.deps).routes.filter(
      (r) => r.method !== "ALL" && ruleFor(r.method, r.path)?.entry.rule.kind === "session",
    );
    const keys = [...new Set(routes.map((r) => `${r.method} ${r.path}`))];
    // Score GET/POST, notifications and review-activity are among them.
    expect(keys).toEqual(
      expect.arrayContaining([
        "GET /api/v1/sessions/:id/score",
        "POST /api/v1/sessions/:id/score",
        "GET /api/v1/sessions/:id/notifications",
        "GET /api/v1/sessions/:id/review-activity",
      ]),
    );
    const failures: string[] = [];
    for (const key of keys) {
      const [method = "", path = ""] = key.split(" ");
      const rule = ruleFor(method, path)?.entry.rule;
      if (!rule) throw new Error(`no rule for ${key}`);
      for (const caller of CALLERS) {
        const { url, body } = await requestFor(method, path, sessionB);
        const res = await call(method, url, headersOf[caller], body);
        const want = expected(rule, caller, true);
        const got = res.status;
        const hidden = got === 404 && res.body?.error?.message === `session ${sessionB} not found`;
        const ok =
          want === "allowed"
            ? got !== 401 && got !== 403 && !hidden && got > 0 && got < 500
            : want === 404
              ? hidden && res.body?.error?.code === "not_found"
              : got === want;
        if (!ok) failures.push(`${key} on team-b's session as ${caller}: ${got}, expected ${want}`);
      }
    }
    expect(failures).toEqual([]);
  });
});
