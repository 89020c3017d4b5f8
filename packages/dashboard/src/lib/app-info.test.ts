import { describe, expect, it } from "vitest";
import { fetchServedBuild, fetchServerVersion, fetchUserInfo } from "./app-info.ts";

const answer =
  (status: number, body: unknown): typeof fetch =>
  async () =>
    new Response(typeof body === "string" ? body : JSON.stringify(body), { status });

describe("app info", () => {
  it("reads oauth2-proxy's user in either shape, and nothing from a page that is not JSON", async () => {
    await expect(fetchUserInfo(answer(200, { user: "jdoe", email: "j@x.io" }))).resolves.toEqual({
      name: "jdoe",
      email: "j@x.io",
    });
    await expect(
      fetchUserInfo(answer(200, { preferredUsername: "Jane", email: "j@x.io" })),
    ).resolves.toEqual({ name: "Jane", email: "j@x.io" });
    await expect(fetchUserInfo(answer(200, "<!doctype html><html></html>"))).resolves.toBeNull();
    await expect(fetchUserInfo(answer(200, {}))).resolves.toBeNull();
    await expect(fetchUserInfo(answer(401, { user: "jdoe" }))).resolves.toBeNull();
  });

  it("reads the version from /health even when the system is degraded", async () => {
    await expect(fetchServerVersion(answer(503, { version: "1.2.3" }))).resolves.toBe("1.2.3");
    await expect(fetchServerVersion(answer(500, { version: "1.2.3" }))).resolves.toBeNull();
  });

  it("reads the served build id, and none when the server has no version.json", async () => {
    await expect(fetchServedBuild(answer(200, { build: "abc" }))).resolves.toBe("abc");
    await expect(fetchServedBuild(answer(404, { error: {} }))).resolves.toBeNull();
  });
});
