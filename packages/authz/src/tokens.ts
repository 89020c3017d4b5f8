import { createHash, randomBytes } from "node:crypto";

/** Every API token starts with this, so a bearer token is told apart from a user's own. */
export const API_TOKEN_PREFIX = "tarsy_";
const TOKEN_RE = /^tarsy_[A-Za-z0-9_-]{43}$/;

/** A new API token (shown once) and the hash that is stored in its place. */
export function newApiToken(): { token: string; hash: string } {
  const token = `${API_TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
  return { token, hash: hashApiToken(token) };
}

export const hashApiToken = (token: string): string =>
  createHash("sha256").update(token).digest("hex");

export const isApiTokenShape = (value: string): boolean => TOKEN_RE.test(value);

/** The value of `Authorization: Bearer <value>`, if the header is one. */
export function bearerOf(header: string | undefined): string | undefined {
  const match = /^bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return match?.[1];
}
