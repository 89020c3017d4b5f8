import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/app.ts";
import { type Harness, startHarness } from "./support.ts";

/**
 * The Content-Security-Policy and the other security headers, as a browser receives them: on
 * the dashboard's index (and its client-side routes), its assets, `/config.json` and the API,
 * from a real listening ingest-api whose relay is on another port.
 */
const RELAY_WS_URL = "ws://127.0.0.1:8081/api/v1/ws";

/** The policy's directives, each with its sources in order. */
function directives(res: Response): Record<string, string[]> {
  const header = res.headers.get("content-security-policy") ?? "";
  return Object.fromEntries(
    header
      .split(";")
      .map((d) => d.trim().split(/\s+/))
      .map(([name = "", ...sources]) => [name, sources]),
  );
}

const policyWith = (connectSrc: string[]) => ({
  "default-src": ["'self'"],
  "script-src": ["'self'"],
  "style-src": ["'self'", "'unsafe-inline'"],
  "img-src": ["'self'", "data:"],
  "connect-src": connectSrc,
  "frame-src": ["'none'"],
  "frame-ancestors": ["'none'"],
  "object-src": ["'none'"],
  "base-uri": ["'self'"],
  "form-action": ["'self'"],
});

describe("security headers", () => {
  let h: Harness;
  let staticDir: string;
  beforeAll(async () => {
    // The shape of the build: index.html loading its script and stylesheet from /assets.
    staticDir = mkdtempSync(join(tmpdir(), "ingest-dashboard-"));
    mkdirSync(join(staticDir, "assets"));
    writeFileSync(
      join(staticDir, "index.html"),
      '<!doctype html><script type="module" src="/assets/index-abc.js"></script><div id="root"></div>',
    );
    writeFileSync(join(staticDir, "assets/index-abc.js"), "console.log('app')");
    writeFileSync(join(staticDir, "assets/index-abc.css"), "a { color: blue }");
    h = await startHarness({ settings: { staticDir, wsUrl: RELAY_WS_URL } });
  });
  afterAll(async () => {
    await h?.close();
    rmSync(staticDir, { recursive: true, force: true });
  });

  it("gives the dashboard, its assets, its config and the API one strict policy naming the relay's origin", async () => {
    const expected = policyWith(["'self'", "ws://127.0.0.1:8081"]);
    for (const [path, status, type] of [
      ["/", 200, "text/html"],
      ["/sessions/123", 200, "text/html"],
      ["/assets/index-abc.js", 200, "text/javascript"],
      ["/assets/index-abc.css", 200, "text/css"],
      ["/config.json", 200, "application/json"],
      ["/api/v1/sessions", 200, "application/json"],
      ["/api/v1/unknown", 404, "application/json"],
      ["/health", 200, "application/json"],
    ] as const) {
      const res = await fetch(`${h.url}${path}`);
      await res.arrayBuffer();
      expect(res.status, path).toBe(status);
      expect(res.headers.get("content-type"), path).toContain(type);
      expect(directives(res), path).toEqual(expected);
      expect(res.headers.get("x-content-type-options"), path).toBe("nosniff");
      expect(res.headers.get("referrer-policy"), path).toBe("no-referrer");
      expect(res.headers.get("x-frame-options"), path).toBe("DENY");
      // TLS is terminated in front of ingest-api: HSTS is for that proxy to send.
      expect(res.headers.get("strict-transport-security"), path).toBeNull();
    }
  });

  it("lets the page connect to its own origin only when the relay is on it", async () => {
    const policyFor = async (wsUrl: string | undefined) => {
      const { wsUrl: _relay, ...settings } = h.deps.settings;
      const app = createApp({ ...h.deps, settings: wsUrl ? { ...settings, wsUrl } : settings });
      return directives(await app.request("/"))["connect-src"];
    };
    expect(await policyFor(undefined)).toEqual(["'self'"]);
    expect(await policyFor("/api/v1/ws")).toEqual(["'self'"]);
    // An http(s) URL is the WebSocket the page opens on it (the page swaps the scheme).
    expect(await policyFor("https://relay.example/api/v1/ws")).toEqual([
      "'self'",
      "wss://relay.example",
    ]);
    expect(await policyFor("http://relay.example:9000/api/v1/ws")).toEqual([
      "'self'",
      "ws://relay.example:9000",
    ]);
  });
});
