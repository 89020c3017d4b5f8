import { countStoredRows } from "@tarsy/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/app.ts";
import { finishSession, seedSession } from "./seed.ts";
import { type Harness, request, startHarness } from "./support.ts";

/** Bodies and query strings that used to reach Postgres or the stack: each is a clear 4xx. */

type Fields = { path: string; message: string }[];
type ErrorWithFields = {
  error: { code: string; message: string; details?: { fields?: Fields; limit?: number } };
};

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const counts = async () => {
  const { sessions, chatUserMessages, outbox } = await countStoredRows(h.db.prisma);
  return { sessions, messages: chatUserMessages, outbox };
};

const postRaw = (path: string, body: string | Uint8Array, contentType = "application/json") =>
  fetch(`${h.url}${path}`, { method: "POST", headers: { "content-type": contentType }, body });

async function expectRejected(res: Response, status: number, code: string, field?: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  const body = (await res.json()) as ErrorWithFields;
  expect(body.error.code).toBe(code);
  if (field) {
    expect(body.error.details?.fields?.map((f) => f.path)).toContain(field);
    expect(body.error.message).toContain(field);
  }
  return body;
}

const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

describe("JSON bodies", () => {
  it("rejects nesting past 64 levels with 400 too_deep and accepts exactly 64", async () => {
    const before = await counts();
    // 10,000 levels fit in a few KB; parsing them used to overflow the stack (500).
    const deep = await postRaw("/api/v1/alerts", `{"data":{"x":${nested(10_000)}}}`);
    const body = await expectRejected(deep, 400, "too_deep");
    expect(body.error.details?.limit).toBe(64);
    // Brackets inside strings are text, not nesting.
    const inString = await postRaw("/api/v1/alerts", JSON.stringify({ data: "[".repeat(5_000) }));
    expect(inString.status).toBe(202);
    // The envelope counts: {data: {x: [ ... 62 ... ]}} is 64 levels.
    const atLimit = await postRaw("/api/v1/alerts", `{"data":{"x":${nested(62)}}}`);
    expect(atLimit.status).toBe(202);
    const over = await postRaw("/api/v1/alerts", `{"data":{"x":${nested(63)}}}`);
    await expectRejected(over, 400, "too_deep");
    const chat = await postRaw(
      "/api/v1/sessions/00000000-0000-4000-8000-000000000001/chat/messages",
      `{"content":${nested(5_000)}}`,
    );
    await expectRejected(chat, 400, "too_deep");
    const after = await counts();
    expect(after.sessions).toBe(before.sessions + 2);
  });

  it("rejects NUL and unpaired surrogates in any string with 400 naming the field", async () => {
    const before = await counts();
    const cases: [unknown, string][] = [
      [{ data: "disk\u0000full" }, "data"],
      [{ data: { pod: "api\u0000-1" } }, "data.pod"],
      [{ data: { "key\u0000": "v" } }, 'data."key\\u0000"'],
      [{ data: "x", alert_type: "kube\u0000rnetes" }, "alert_type"],
      [{ data: "x", runbook: "https://example.com/\u0000" }, "runbook"],
      [{ data: { note: "half \ud800 pair" } }, "data.note"],
      [
        { data: "x", mcp: { servers: [{ name: "k8s", tools: ["a\udc00"] }] } },
        "mcp.servers.0.tools.0",
      ],
    ];
    for (const [payload, field] of cases) {
      const res = await postRaw("/api/v1/alerts", JSON.stringify(payload));
      await expectRejected(res, 400, "validation_failed", field);
    }
    // As raw JSON escapes, the way a client writes them.
    const escaped = await postRaw("/api/v1/alerts", '{"data":"a\\u0000b"}');
    await expectRejected(escaped, 400, "validation_failed", "data");
    const lone = await postRaw("/api/v1/alerts", '{"data":"a\\udfffb"}');
    await expectRejected(lone, 400, "validation_failed", "data");
    expect(await counts()).toEqual(before);
  });

  it("rejects NUL in a chat message and stores no message", async () => {
    const session = await seedSession(h.db.prisma);
    await finishSession(h.db.prisma, session.id);
    const before = await counts();
    const res = await postRaw(
      `/api/v1/sessions/${session.id}/chat/messages`,
      JSON.stringify({ content: "why\u0000?" }),
    );
    await expectRejected(res, 400, "validation_failed", "content");
    expect(await counts()).toEqual(before);
  });

  it("rejects invalid UTF-8 with 400 and a non-UTF-8 charset with 415", async () => {
    const before = await counts();
    const bytes = Buffer.concat([
      Buffer.from('{"data":"'),
      Buffer.from([0xc3, 0x28, 0xff]),
      Buffer.from('"}'),
    ]);
    const invalid = await postRaw("/api/v1/alerts", bytes);
    const body = await expectRejected(invalid, 400, "bad_request");
    expect(body.error.message).toMatch(/UTF-8/);
    const utf16 = await postRaw(
      "/api/v1/alerts",
      Buffer.from(JSON.stringify({ data: "x" }), "utf16le"),
      "application/json; charset=utf-16",
    );
    const rejected = await expectRejected(utf16, 415, "unsupported_media_type");
    expect(rejected.error.message).toMatch(/charset=utf-16/);
    const latin1 = await postRaw(
      "/api/v1/alerts",
      '{"data":"x"}',
      "application/json; charset=ISO-8859-1",
    );
    await expectRejected(latin1, 415, "unsupported_media_type");
    const utf8 = await postRaw(
      "/api/v1/alerts",
      '{"data":"ünïcode"}',
      'application/json; charset="UTF-8"',
    );
    expect(utf8.status).toBe(202);
    const after = await counts();
    expect(after.sessions).toBe(before.sessions + 1);
  });
});

describe("alert fields", () => {
  it("accepts only http(s) runbooks without credentials, link-local or metadata hosts", async () => {
    const before = await counts();
    for (const runbook of [
      "javascript:alert(1)",
      "file:///etc/passwd",
      "https://user:pass@github.com/org/runbooks/x.md",
      "http://169.254.169.254/latest/meta-data/",
      "http://[fe80::1]/runbook.md",
      "http://metadata.google.internal/computeMetadata/v1/",
    ]) {
      const res = await postRaw("/api/v1/alerts", JSON.stringify({ data: "x", runbook }));
      const body = await expectRejected(res, 400, "validation_failed", "runbook");
      expect(body.error.details?.fields?.[0]?.message, runbook).toMatch(
        /scheme|credentials|link-local|metadata/,
      );
    }
    expect(await counts()).toEqual(before);
    const ok = await postRaw(
      "/api/v1/alerts",
      JSON.stringify({ data: "x", runbook: "https://github.com/org/runbooks/blob/main/x.md" }),
    );
    expect(ok.status).toBe(202);
  });

  it("takes data as a JSON object or non-empty text and rejects any other JSON value", async () => {
    const before = await counts();
    for (const data of [[1, 2], [], 42, true, null, ""]) {
      const res = await postRaw("/api/v1/alerts", JSON.stringify({ data }));
      await expectRejected(res, 400, "validation_failed", "data");
    }
    for (const body of ["[]", '"text"', "null", "7"]) {
      const res = await postRaw("/api/v1/alerts", body);
      await expectRejected(res, 400, "validation_failed");
    }
    expect(await counts()).toEqual(before);
  });
});

describe("GET /api/v1/sessions query parameters", () => {
  it("answers 400 naming each bad or unknown parameter", async () => {
    const cases: [string, string][] = [
      ["limit=-1", "limit"],
      ["limit=abc", "limit"],
      ["start_date=notadate", "start_date"],
      ["page=0", "page"],
      ["page=-3", "page"],
      ["page=1.5", "page"],
      ["page=abc", "page"],
      ["page_size=1001", "page_size"],
      ["from=notadate", "from"],
      ["to=2026-13-45T00:00:00Z", "to"],
      ["sort_by=password", "sort_by"],
      ["sort_order=up", "sort_order"],
      ["status=pending,running", "status.1"],
      ["search=ab", "search"],
      ["alert_type=a%00b", "alert_type"],
      ["search=abc%00def", "search"],
    ];
    for (const [query, field] of cases) {
      const res = await fetch(`${h.url}/api/v1/sessions?${query}`);
      await expectRejected(res, 400, "validation_failed", field);
    }
    const ok = await request<{ sessions: unknown[] }>(
      `${h.url}/api/v1/sessions?page=1&page_size=10&sort_by=created_at&status=pending,completed`,
    );
    expect(ok.status).toBe(200);
  });

  it("answers the same through app.request()", async () => {
    const app = createApp(h.deps);
    const res = await app.request("/api/v1/sessions?limit=5");
    await expectRejected(res, 400, "validation_failed", "limit");
    const deep = await app.request("/api/v1/alerts", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: `{"data":${nested(1_000)}}`,
    });
    await expectRejected(deep, 400, "too_deep");
  });
});
