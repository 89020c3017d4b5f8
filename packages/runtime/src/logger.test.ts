import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "./logger.ts";

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, destination };
}

describe("createLogger", () => {
  it("redacts secrets, tokens, authorization headers and raw payloads", () => {
    const { lines, destination } = capture();
    const logger = createLogger({ service: "svc", destination });
    logger.info(
      {
        token: "tok-123",
        api_key: "sk-live-abc",
        req: { headers: { authorization: "Bearer secret-xyz" } },
        headers: { authorization: "Bearer secret-xyz", cookie: "session=s3cr3t" },
        payload: '{"password":"hunter2"}',
        session_id: "s-1",
      },
      "request",
    );
    const out = lines.join("");
    for (const secret of ["tok-123", "sk-live-abc", "secret-xyz", "s3cr3t", "hunter2"]) {
      expect(out).not.toContain(secret);
    }
    expect(JSON.parse(out)).toMatchObject({ service: "svc", session_id: "s-1", msg: "request" });
  });
});
