import type { AuthorizationConfig } from "@tarsy/config";
import { listAudit } from "@tarsy/db";
import { createLogger } from "@tarsy/runtime";
import { createTestDb, type TestDb } from "@tarsy/testkit";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccessControl } from "../access.ts";
import type { IngestResources } from "../deps.ts";
import { HttpError } from "../errors.ts";
import { guard } from "./guard.ts";

/**
 * The guard on its own, before any route: an API path that `ROUTE_RULES` does not name is
 * refused while authorization is on (fail closed), not served as if it were public.
 */

const authorization = (enabled: boolean): AuthorizationConfig => ({
  enabled,
  scopes: "groups",
  policy_default: "",
  projects: ["team-a"],
  default_project: "team-a",
  trusted_proxies: ["127.0.0.1"],
  alertmanager: { identity: "alertmanager", project: "team-a" },
  user_token_ttl_ms: 60_000,
  policy: "g, admins, admin\np, admin, sessions, *, */*",
});

let testDb: TestDb;
beforeAll(async () => {
  testDb = await createTestDb();
});
afterAll(async () => {
  await testDb?.cleanup();
});

/** A Hono app with the guard and two routes: one the table names, one it does not. */
async function appWith(enabled: boolean): Promise<Hono> {
  const config = authorization(enabled);
  const deps = {
    prisma: testDb.db.prisma,
    logger: createLogger({ service: "guard-test", level: "silent" }),
    access: await createAccessControl(config, testDb.db.prisma),
  } as Pick<IngestResources, "prisma" | "logger" | "access"> as IngestResources;
  const app = new Hono();
  app.onError((err, c) =>
    err instanceof HttpError ? c.json(err.toBody(), err.status) : c.text(String(err), 500),
  );
  app.use(
    "/api/*",
    guard(deps, () => "127.0.0.1"),
  );
  app.get("/api/v1/auth/me", (c) => c.json({ served: "me" }));
  app.get("/api/v1/unruled", (c) => c.json({ served: "unruled" }));
  app.post("/api/v1/unruled", (c) => c.json({ served: "unruled" }));
  app.get("/index.html", (c) => c.text("dashboard"));
  return app;
}

type ErrorBody = { error: { code: string; message: string } };
const ADMIN = { "x-forwarded-user": "adam", "x-forwarded-groups": "admins" };

describe("the guard", () => {
  it("refuses a route without a rule: 401 without identity, 403 with (even for an admin), audited", async () => {
    const app = await appWith(true);
    for (const method of ["GET", "POST"]) {
      const anonymous = await app.request("/api/v1/unruled", { method });
      expect(anonymous.status).toBe(401);
      expect(((await anonymous.json()) as ErrorBody).error.code).toBe("unauthorized");
      const admin = await app.request("/api/v1/unruled", { method, headers: ADMIN });
      expect(admin.status).toBe(403);
      const body = (await admin.json()) as ErrorBody;
      expect(body.error).toMatchObject({ code: "forbidden" });
      expect(body.error.message).toMatch(/no authorization rule for (GET|POST) \/api\/v1\/unruled/);
    }
    // A route the table names still serves the same admin.
    const me = await app.request("/api/v1/auth/me", { headers: ADMIN });
    expect([me.status, await me.json()]).toEqual([200, { served: "me" }]);
    await expect
      .poll(async () =>
        (await listAudit(testDb.db.prisma, { limit: 50, outcome: "denied" }))
          .filter((r) => r.path === "/api/v1/unruled")
          .map((r) => `${r.actor} ${r.method} ${r.status}`)
          .sort(),
      )
      .toEqual(["adam GET 403", "adam POST 403", "anonymous GET 401", "anonymous POST 401"]);
  });

  it("leaves paths outside /api alone, and with authorization off lets every route run", async () => {
    const on = await appWith(true);
    expect((await on.request("/index.html")).status).toBe(200);
    const off = await appWith(false);
    const res = await off.request("/api/v1/unruled");
    expect([res.status, await res.json()]).toEqual([200, { served: "unruled" }]);
  });
});
