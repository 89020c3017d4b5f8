import { describe, expect, it } from "vitest";
import { FetchableUrlSchema, unsafeUrlReason } from "./url.ts";

describe("fetchable URLs (runbooks)", () => {
  it("accepts http(s) URLs, internal hosts included", () => {
    for (const url of [
      "https://github.com/org/runbooks/blob/main/pod-crash.md",
      "http://git.internal:8080/runbooks/disk.md",
      "http://10.1.2.3/runbook.md",
      "https://[2001:db8::1]/r.md",
    ]) {
      expect(unsafeUrlReason(url), url).toBeUndefined();
    }
  });

  it("rejects other schemes, credentials, link-local and metadata hosts", () => {
    const cases: [string, RegExp][] = [
      ["javascript:alert(1)", /scheme javascript:/],
      ["file:///etc/passwd", /scheme file:/],
      ["ftp://example.com/x", /scheme ftp:/],
      ["https://user:pass@example.com/r.md", /credentials/],
      ["https://token@example.com/r.md", /credentials/],
      ["http://169.254.169.254/latest/meta-data/", /link-local/],
      ["http://2852039166/latest/meta-data/", /link-local/],
      ["http://0xa9.0xfe.0xa9.0xfe/", /link-local/],
      ["http://[fe80::1]/", /link-local/],
      ["http://[::ffff:169.254.169.254]/", /link-local/],
      ["http://metadata.google.internal/computeMetadata/v1/", /metadata/],
      ["http://METADATA.GOOGLE.INTERNAL./", /metadata/],
      ["not a url", /not a valid URL/],
    ];
    for (const [url, reason] of cases) expect(unsafeUrlReason(url), url).toMatch(reason);
  });

  it("reports the reason as the schema's issue message", () => {
    const parsed = FetchableUrlSchema.safeParse("file:///etc/shadow");
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toMatch(/scheme file:/);
  });
});
