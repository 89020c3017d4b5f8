import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
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
type Caller = "nobody" | "viewer-a" | "operator-a" | "admin" | "token-a" | "untrusted";
const CALLERS: Caller[] = ["nobody", "viewer-a", "operator-a", "admin", "token-a", "untrusted"];
const proxy = (user: string, group: string) => ({
  "x-forwarded-user": user,
  "x-forwarded-groups": group,
});

let h: Harness;
let sessionA: string;
let headersOf: Record<Caller, Record<string, string>>;

beforeAll(async () => {
  const staticDir = mkdtempSync(join(tmpdir(), "tarsy-dashboard-"));
  writeFileSync(join(staticDir, "index.html"), "<!doctype html><title>TARSy</title>");
  h = await startHarness({
    configDir: AUTHZ_CONFIG_DIR,
    peerHeader: PEER,
    settings: { staticDir },
  });
  sessionA = (
    await seedSession(h.db.prisma, {
      alertType: "KubePodCrashLooping",
      chainId: "crashloop-chain",
      project: "team-a",
    })
  ).id;
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
    admin: proxy("adam", "admins"),
    "token-a": { authorization: `Bearer ${token}` },
    untrusted: { ...proxy("adam", "admins"), [PEER]: "203.0.113.9" },
  };
});
afterAll(async () => {
  await h?.close();
});

type Expected = 401 | 403 | "allowed";

/**
 * The status the rule gives a caller (`allowed`: neither 401 nor 403, nor the session's 404,
 * nor a 5xx: a route that breaks is no proof that it let the caller in).
 */
function expected(rule: RouteRule, path: string, caller: Caller): Expected {
  // No webhook credentials in this harness: only an API token gets through (fail closed).
  if (rule.kind === "receiver") return caller === "token-a" ? "allowed" : 401;
  if (rule.kind === "public") return "allowed";
  if (caller === "nobody" || caller === "untrusted") return 401;
  const may: Record<Exclude<Caller, "nobody" | "untrusted">, string[]> = {
    "viewer-a": ["get"],
    "operator-a": ["get", "create", "update", "cancel", "delete"],
    "token-a": ["get", "create", "update", "cancel", "delete"],
    admin: ["*"],
  };
  const allows = (action: string) => may[caller].includes(action) || may[caller].includes("*");
  switch (rule.kind) {
    case "identified":
    case "list":
    // Bulk review answers 200 with a per-session result (forbidden, not_found) for each.
    case "sessions":
      return "allowed";
    case "session":
    case "memory":
      return allows(rule.action) ? "allowed" : 403;
    case "submit":
      return allows("create") ? "allowed" : 403;
    case "project_admin":
    case "global_admin":
      return allows("admin") ? "allowed" : 403;
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
async function requestFor(method: string, path: string): Promise<{ url: string; body?: unknown }> {
  const id = path.startsWith("/api/v1/tokens")
    ? crypto.randomUUID()
    : path.startsWith("/api/v1/memories/")
      ? await seedMemory()
      : sessionA;
  const url = path
    .replace(":id", id)
    .replace(":interactionId", crypto.randomUUID())
    .replace(":group", "needs_review")
    .replace(/^\/\*$/, "/index.html");
  if (method === "PATCH" && path === "/api/v1/memories/:id")
    return { url, body: { deprecated: true } };
  if (method === "PATCH" && path === "/api/v1/sessions/review") {
    return { url, body: { session_ids: [sessionA], action: "claim" } };
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
        const want = expected(rule, route.path, caller);
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
});
