import { createHash } from "node:crypto";

/** A strong ETag of exactly these bytes (a quoted SHA-256 prefix, base64url). */
export function etagOf(body: string): string {
  return `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;
}

/**
 * Whether an `If-None-Match` header matches `etag`: `*`, or one of its comma-separated tags
 * (weak comparison, as RFC 9110 asks of If-None-Match: `W/"x"` matches `"x"`).
 */
export function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header
    .split(",")
    .map((tag) => tag.trim())
    .some((tag) => tag === "*" || tag.replace(/^W\//, "") === etag);
}
