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
    expect(env.ALERTMANAGER_MAX_ALERTS).toBe(1000);
    expect(env.MAX_JSON_DEPTH).toBe(64);
    expect(env.MAX_HEADER_BYTES).toBe(16 * 1024);
  });

  it("rejects intake limits that would disable the limit", () => {
    for (const [name, value] of [
      ["ALERTMANAGER_MAX_ALERTS", "0"],
      ["ALERTMANAGER_MAX_ALERTS", "20000"],
      ["MAX_JSON_DEPTH", "1"],
      ["MAX_HEADER_BYTES", "100"],
    ] as const) {
      expect(() => loadEnv({ [name]: value }), name).toThrow(new RegExp(name));
    }
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

  it("takes the relay's WebSocket URL as an absolute ws(s) or http(s) URL or a path, nothing else", () => {
    for (const url of [
      "ws://relay.example:8081/api/v1/ws",
      "wss://relay.example/api/v1/ws",
      "https://relay.example/api/v1/ws",
      "/api/v1/ws",
    ]) {
      expect(loadEnv({ TARSY_WS_URL: url }).TARSY_WS_URL, url).toBe(url);
    }
    expect(loadEnv({ TARSY_WS_URL: "" }).TARSY_WS_URL).toBeUndefined();
    // It ends up in the Content-Security-Policy: what could not be a relay's URL is refused.
    for (const url of ["relay:8081", "//relay.example/ws", "ftp://relay.example/ws", "api/v1/ws"]) {
      expect(() => loadEnv({ TARSY_WS_URL: url }), url).toThrow(/TARSY_WS_URL/);
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
