import type { IncomingMessage } from "node:http";

/**
 * Origin policy: no Origin header (a non-browser client) is allowed; `*` allows every origin;
 * otherwise the origin must be listed, or be the same origin as the request when the list is empty.
 */
export function isOriginAllowed(req: IncomingMessage, allowed: readonly string[]): boolean {
  const origin = req.headers.origin;
  if (!origin) return true;
  if (allowed.includes("*")) return true;
  if (allowed.some((a) => a.replace(/\/$/, "") === origin)) return true;
  if (allowed.length > 0) return false;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}

/** The identity set by the auth proxy in front of TARSy (oauth2-proxy), if any. */
export function identityOf(req: IncomingMessage): string | null {
  const user = req.headers["x-forwarded-user"];
  const email = req.headers["x-forwarded-email"];
  const pick = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v) || null;
  return pick(user) ?? pick(email);
}
