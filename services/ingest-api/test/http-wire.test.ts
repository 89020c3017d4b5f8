import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasErrorShape, type RawResponse, rawExchange } from "./raw-http.ts";
import { type Harness, startHarness } from "./support.ts";

/**
 * Requests Node's HTTP parser or the adapter reject before the app runs, sent as raw bytes
 * over a real socket: each answer still has the `{ error: { code, message } }` JSON shape.
 */
describe("HTTP errors from below the app", () => {
  let h: Harness;
  let port: number;
  const ID = "00000000-0000-4000-8000-000000000001";

  beforeAll(async () => {
    h = await startHarness();
    port = Number(new URL(h.url).port);
  });
  afterAll(async () => {
    await h?.close();
  });

  const only = (responses: RawResponse[]): RawResponse => {
    expect(responses).toHaveLength(1);
    return responses[0] as RawResponse;
  };
  const code = (res: RawResponse) =>
    (JSON.parse(res.body) as { error: { code: string } }).error.code;

  it("answers 431 in the error shape for a long query string and for long headers", async () => {
    const longUrl = only(
      await rawExchange(
        port,
        `GET /api/v1/sessions?search=${"a".repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
      ),
    );
    expect(longUrl.status).toBe(431);
    expect(hasErrorShape(longUrl)).toBe(true);
    expect(code(longUrl)).toBe("headers_too_large");

    const longHeader = only(
      await rawExchange(
        port,
        `GET /api/v1/sessions HTTP/1.1\r\nHost: x\r\nX-Forwarded-User: ${"u".repeat(20_000)}\r\n\r\n`,
      ),
    );
    expect(longHeader.status).toBe(431);
    expect(hasErrorShape(longHeader)).toBe(true);
  });

  it("answers 400 in the error shape for a backslash in the path", async () => {
    const res = only(
      await rawExchange(
        port,
        "GET /api/v1/sessions/a\\b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
      ),
    );
    expect(res.status).toBe(400);
    expect(hasErrorShape(res)).toBe(true);
    expect(res.body).toMatch(/Backslash/);
  });

  it("answers DELETE with a body in the error shape, with or without a length", async () => {
    const withLength = only(
      await rawExchange(
        port,
        `DELETE /api/v1/sessions/${ID} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 7\r\nConnection: close\r\n\r\n{"a":1}`,
      ),
    );
    expect(withLength.status).toBe(404);
    expect(hasErrorShape(withLength)).toBe(true);

    // Without a length the body is read as the next request on the connection.
    const pipelined = await rawExchange(
      port,
      `DELETE /api/v1/sessions/${ID} HTTP/1.1\r\nHost: x\r\n\r\n{"a":1}`,
    );
    expect(pipelined.length).toBeGreaterThan(0);
    for (const res of pipelined) {
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(hasErrorShape(res), res.body).toBe(true);
    }
  });

  it("answers malformed requests with 400 in the error shape", async () => {
    const requests = [
      "HELLO\r\n\r\n",
      "GET /api/v1/sessions HTTP/1.1\r\nConnection: close\r\n\r\n",
      "GET /api/v1/sessions HTTP/1.0\r\n\r\n",
      "POST /api/v1/alerts HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
      "POST /api/v1/alerts HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
      "GET /api/v1/sessions HTTP/1.1\r\nHost: x\r\nX-Forwarded-User: a\u0000b\r\n\r\n",
      "GET /api/v1/sessions HTTP/1.1\r\nHost: a b\r\nConnection: close\r\n\r\n",
      "OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    ];
    for (const request of requests) {
      const res = only(await rawExchange(port, request));
      expect(res.status, request).toBe(400);
      expect(hasErrorShape(res), `${request} → ${res.body}`).toBe(true);
    }
  });

  it("keeps serving after the malformed requests", async () => {
    const res = only(
      await rawExchange(
        port,
        "GET /api/v1/system/alert-types HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
      ),
    );
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toHaveProperty("alert_types");
  });
});
