import { EnvError } from "@tarsy/runtime";
import { describe, expect, it } from "vitest";
import { loadEnv } from "./env.ts";

describe("loadEnv", () => {
  it("has working defaults", () => {
    const env = loadEnv({});
    expect(env.PORT).toBe(8080);
    expect(env.MAX_ALERT_BYTES).toBe(1024 * 1024);
    expect(env.ALERTMANAGER_DEDUPE_WINDOW).toBe(4 * 3600_000);
    expect(env.ALERTMANAGER_MODE).toBe("per_alert");
    expect(env.ALERTMANAGER_BEARER_TOKEN).toBeUndefined();
    expect(env.TARSY_PROVISION_STREAMS).toBe(true);
  });

  it("parses durations and names every bad variable", () => {
    expect(loadEnv({ ALERTMANAGER_DEDUPE_WINDOW: "30m" }).ALERTMANAGER_DEDUPE_WINDOW).toBe(
      1_800_000,
    );
    let error: unknown;
    try {
      loadEnv({
        ALERTMANAGER_DEDUPE_WINDOW: "soon",
        ALERTMANAGER_MODE: "per_team",
        PORT: "http",
        ALERTMANAGER_BASIC_USER: "am",
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(EnvError);
    const issues = (error as EnvError).issues.join("\n");
    for (const name of ["ALERTMANAGER_DEDUPE_WINDOW", "ALERTMANAGER_MODE", "PORT"]) {
      expect(issues).toContain(name);
    }
  });

  it("requires the basic auth password with the user", () => {
    expect(() => loadEnv({ ALERTMANAGER_BASIC_USER: "am" })).toThrow(/ALERTMANAGER_BASIC_PASSWORD/);
    expect(
      loadEnv({ ALERTMANAGER_BASIC_USER: "am", ALERTMANAGER_BASIC_PASSWORD: "pw" })
        .ALERTMANAGER_BASIC_USER,
    ).toBe("am");
  });
});
