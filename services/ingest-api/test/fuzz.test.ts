import { countStoredRows } from "@tarsy/db/testing";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasErrorShape, type RawResponse, rawExchange } from "./raw-http.ts";
import { finishSession, seedSession } from "./seed.ts";
import { type Harness, startHarness } from "./support.ts";

/**
 * Arbitrary requests against every route through a real listening server, written as raw
 * bytes so bodies, headers, lengths and paths can be anything. Properties: never a 5xx,
 * every non-2xx in the error shape with a JSON content type, and the server still answers.
 */

let h: Harness;
let port: number;
let sessionId: string;
const seenStatuses = new Map<number, number>();

beforeAll(async () => {
  h = await startHarness();
  port = Number(new URL(h.url).port);
  const session = await seedSession(h.db.prisma);
  await finishSession(h.db.prisma, session.id);
  sessionId = session.id;
});
afterAll(async () => {
  await h?.close();
});

const ROUTES: { method: string; path: (id: string) => string; body: boolean }[] = [
  { method: "POST", path: () => "/api/v1/alerts", body: true },
  { method: "POST", path: () => "/api/v1/alerts/alertmanager", body: true },
  { method: "GET", path: () => "/api/v1/sessions", body: false },
  { method: "GET", path: () => "/api/v1/sessions/active", body: false },
  { method: "GET", path: () => "/api/v1/sessions/filter-options", body: false },
  { method: "GET", path: (id) => `/api/v1/sessions/${id}`, body: false },
  { method: "GET", path: (id) => `/api/v1/sessions/${id}/timeline`, body: false },
  { method: "GET", path: (id) => `/api/v1/sessions/${id}/summary`, body: false },
  { method: "GET", path: (id) => `/api/v1/sessions/${id}/status`, body: false },
  { method: "POST", path: (id) => `/api/v1/sessions/${id}/cancel`, body: true },
  { method: "POST", path: (id) => `/api/v1/sessions/${id}/chat/messages`, body: true },
  { method: "GET", path: (id) => `/api/v1/sessions/${id}/trace`, body: false },
  { method: "PATCH", path: () => "/api/v1/sessions/review", body: true },
  { method: "GET", path: (id) => `/api/v1/sessions/${id}/review-activity`, body: false },
  { method: "GET", path: () => "/api/v1/sessions/triage/needs_review", body: false },
  { method: "GET", path: (id) => `/api/v1/sessions/${id}/trace/llm/${id}`, body: false },
  { method: "GET", path: (id) => `/api/v1/sessions/${id}/trace/mcp/${id}`, body: false },
  { method: "GET", path: () => "/api/v1/system/warnings", body: false },
  { method: "GET", path: () => "/api/v1/system/mcp-servers", body: false },
  { method: "GET", path: () => "/api/v1/system/alert-types", body: false },
  { method: "GET", path: () => "/api/v1/system/default-tools", body: false },
  { method: "GET", path: () => "/api/v1/openapi.json", body: false },
  { method: "GET", path: () => "/config.json", body: false },
];

/** Strings with the characters that broke intake: NUL, lone surrogates, quotes, brackets. */
const nasty = fc
  .array(
    fc.oneof(
      fc.string({ unit: "binary", maxLength: 12 }),
      fc.constantFrom("\u0000", "\ud800", "\udfff", "\\", '"', "{", "[", "%00", "\r\n", "é", "😀"),
    ),
    { maxLength: 6 },
  )
  .map((parts) => parts.join(""));

const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
const urlish = fc.oneof(
  fc.webUrl(),
  fc.constantFrom(
    "javascript:alert(1)",
    "file:///etc/passwd",
    "http://169.254.169.254/",
    "http://[fe80::1]/",
    "https://u:p@example.com/",
  ),
  nasty,
);
const anyJson = fc.jsonValue({ maxDepth: 4 });

const alertBody = fc.record(
  {
    data: fc.oneof(nasty, anyJson, fc.dictionary(nasty, anyJson, { maxKeys: 4 })),
    alert_type: fc.oneof(nasty, fc.constant("kubernetes")),
    runbook: urlish,
    mcp: fc.oneof(
      anyJson,
      fc.record({
        servers: fc.array(fc.record({ name: nasty, tools: fc.array(nasty) }), { maxLength: 3 }),
      }),
    ),
  },
  { requiredKeys: [] },
);

const alertmanagerBody = fc.record(
  {
    status: fc.oneof(fc.constantFrom("firing", "resolved"), nasty),
    groupKey: nasty,
    truncatedAlerts: fc.oneof(fc.nat(), fc.integer(), anyJson),
    groupLabels: fc.dictionary(nasty, nasty, { maxKeys: 3 }),
    alerts: fc.array(
      fc.record(
        {
          status: fc.oneof(fc.constantFrom("firing", "resolved"), nasty),
          labels: fc.oneof(fc.dictionary(nasty, nasty, { maxKeys: 4 }), anyJson),
          annotations: fc.dictionary(
            fc.constantFrom("runbook_url", "summary"),
            fc.oneof(urlish, nasty),
          ),
          fingerprint: fc.oneof(fc.stringMatching(/^[0-9a-f]{1,20}$/), nasty),
          endsAt: fc.oneof(nasty, fc.constant("0001-01-01T00:00:00Z")),
        },
        { requiredKeys: [] },
      ),
      { maxLength: 4 },
    ),
  },
  { requiredKeys: [] },
);

const chatBody = fc.record({ content: fc.oneof(nasty, anyJson) }, { requiredKeys: [] });

/** Body bytes: shaped JSON, any JSON, deep JSON, or raw bytes. */
const bodyBytes = fc.oneof(
  alertBody.map((v) => Buffer.from(JSON.stringify(v))),
  alertmanagerBody.map((v) => Buffer.from(JSON.stringify(v))),
  chatBody.map((v) => Buffer.from(JSON.stringify(v))),
  fc.json().map((text) => Buffer.from(text)),
  fc.integer({ min: 1, max: 5_000 }).map((d) => Buffer.from(`{"data":${nested(d)}}`)),
  fc.uint8Array({ maxLength: 512 }).map((b) => Buffer.from(b)),
  fc.constant(Buffer.alloc(0)),
);

const contentType = fc.oneof(
  fc.constantFrom(
    "application/json",
    "application/json; charset=utf-8",
    'application/json; charset="UTF-8"',
    "application/json; charset=utf-16",
    "application/merge-patch+json",
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
  ),
  fc.string({ unit: "binary-ascii", maxLength: 40 }),
);

/** Content-Length: the truth, a lie within a few bytes either way, or none at all. */
const lengthLie = fc.oneof(
  { weight: 4, arbitrary: fc.constant(0) },
  { weight: 1, arbitrary: fc.integer({ min: -8, max: 8 }) },
  { weight: 1, arbitrary: fc.constant(null) },
);

const id = fc.oneof(
  fc.constant("SESSION"),
  fc.uuid(),
  nasty.map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, ""))),
  fc.string({ unit: "binary-ascii", maxLength: 20 }).map((s) => s.replace(/[\s?#]/g, "")),
);

const query = fc.oneof(
  fc.constant(""),
  fc
    .array(
      fc.tuple(
        fc.oneof(
          fc.constantFrom(
            "page",
            "page_size",
            "status",
            "from",
            "to",
            "search",
            "sort_by",
            "limit",
          ),
          nasty,
        ),
        fc.oneof(nasty, fc.integer().map(String), fc.constantFrom("%00", "%ff", "%ed%a0%80", "%")),
      ),
      { maxLength: 4 },
    )
    .map(
      (pairs) =>
        `?${pairs
          .map(
            ([k, v]) =>
              `${encodeURIComponent(k.replace(/[\ud800-\udfff]/g, ""))}=${v.startsWith("%") ? v : encodeURIComponent(v.replace(/[\ud800-\udfff]/g, ""))}`,
          )
          .join("&")}`,
    ),
);

const request = fc.record({
  route: fc.constantFrom(...ROUTES),
  method: fc.oneof(
    { weight: 6, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS") },
  ),
  id,
  query,
  body: bodyBytes,
  contentType,
  lie: lengthLie,
  user: fc.option(fc.string({ unit: "binary-ascii", maxLength: 30 }), { nil: undefined }),
});

type Req = typeof request extends fc.Arbitrary<infer T> ? T : never;

const hasBody = (r: Req) => r.route.body || (r.method ?? r.route.method) !== "GET";

function toBytes(r: Req): Buffer {
  const method = r.method ?? r.route.method;
  const path = r.route.path(r.id === "SESSION" ? sessionId : r.id) + r.query;
  const withBody = hasBody(r);
  const head = [`${method} ${path} HTTP/1.1`, "Host: 127.0.0.1", "Connection: close"];
  if (withBody) {
    head.push(`Content-Type: ${r.contentType}`);
    if (r.lie !== null) head.push(`Content-Length: ${Math.max(0, r.body.length + r.lie)}`);
  }
  if (r.user !== undefined) head.push(`X-Forwarded-User: ${r.user}`);
  return Buffer.concat([
    Buffer.from(`${head.join("\r\n")}\r\n\r\n`, "latin1"),
    withBody ? r.body : Buffer.alloc(0),
  ]);
}

function checkResponses(responses: RawResponse[], label: string): void {
  for (const res of responses) {
    seenStatuses.set(res.status, (seenStatuses.get(res.status) ?? 0) + 1);
    expect(res.status, `${label} → ${res.status} ${res.body}`).toBeLessThan(500);
    if (res.status >= 300)
      expect(hasErrorShape(res), `${label} → ${res.status} ${res.body}`).toBe(true);
  }
}

const describeReq = (r: Req) => JSON.stringify(toBytes(r).subarray(0, 300).toString("latin1"));

describe("HTTP fuzz", () => {
  it("never answers 5xx and always answers errors in the error shape", async () => {
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        // A request announcing more body than it sends is ended by the client (half-close).
        const halfClose = hasBody(r) && r.lie !== null && r.lie > 0;
        const responses = await rawExchange(port, toBytes(r), { halfClose });
        expect(responses.length, describeReq(r)).toBeGreaterThan(0);
        checkResponses(responses, describeReq(r));
      }),
      { numRuns: 3_000, interruptAfterTimeLimit: 18_000, seed: 20261125 },
    );
    // The run reached the app's validation, not just the parser.
    expect([...seenStatuses.keys()]).toEqual(expect.arrayContaining([200, 400, 404, 415]));
  }, 60_000);

  it("stores nothing for a rejected alert", async () => {
    const alertRequest = fc.record({
      body: fc.oneof(
        alertBody.map((v) => Buffer.from(JSON.stringify(v))),
        fc.integer({ min: 60, max: 200 }).map((d) => Buffer.from(`{"data":${nested(d)}}`)),
        fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
      ),
      contentType: fc.constantFrom("application/json", "application/json; charset=utf-16"),
    });
    await fc.assert(
      fc.asyncProperty(alertRequest, async ({ body, contentType: type }) => {
        const before = (await countStoredRows(h.db.prisma)).sessions;
        const bytes = Buffer.concat([
          Buffer.from(
            `POST /api/v1/alerts HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: ${type}\r\nContent-Length: ${body.length}\r\n\r\n`,
          ),
          body,
        ]);
        const [res] = await rawExchange(port, bytes);
        if (!res) throw new Error("no response");
        checkResponses([res], body.subarray(0, 200).toString("latin1"));
        const after = (await countStoredRows(h.db.prisma)).sessions;
        expect(after - before).toBe(res.status === 202 ? 1 : 0);
      }),
      { numRuns: 500, interruptAfterTimeLimit: 10_000, seed: 20261126 },
    );
  }, 30_000);

  it("still answers after the runs", async () => {
    const [res] = await rawExchange(
      port,
      "GET /api/v1/system/alert-types HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    expect(res?.status).toBe(200);
    expect(JSON.parse(res?.body ?? "{}")).toHaveProperty("alert_types");
  });
});
