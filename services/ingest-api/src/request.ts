import type { Context } from "hono";
import type { z } from "zod";
import { HttpError, validationFailed } from "./errors.ts";

/** Author of a request: `X-Forwarded-User` > `X-Forwarded-Email` > `api-client`. */
export function authorOf(c: Context): string {
  const user = c.req.header("x-forwarded-user")?.trim();
  if (user) return user;
  const email = c.req.header("x-forwarded-email")?.trim();
  if (email) return email;
  return "api-client";
}

function isJsonContentType(value: string | undefined): boolean {
  if (!value) return false;
  const type = value.split(";")[0]?.trim().toLowerCase() ?? "";
  return type === "application/json" || (type.startsWith("application/") && type.endsWith("+json"));
}

/** Reads at most `limit` bytes of the body; more is a 413 (the rest is never buffered). */
async function readLimited(c: Context, limit: number): Promise<string> {
  const declared = Number(c.req.header("content-length"));
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  const body = c.req.raw.body;
  if (!body) return "";
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

const tooLarge = (limit: number) =>
  new HttpError(413, "payload_too_large", `request body exceeds ${limit} bytes`, { limit });

/**
 * Parses a JSON request body: 415 unless the content type is JSON, 413 past `limit`
 * bytes, 400 for malformed JSON, 400 with field paths when the schema rejects it.
 */
export async function readJson<S extends z.ZodType>(
  c: Context,
  schema: S,
  limit: number,
): Promise<z.infer<S>> {
  const contentType = c.req.header("content-type");
  if (!isJsonContentType(contentType)) {
    throw new HttpError(
      415,
      "unsupported_media_type",
      `expected Content-Type application/json, got ${contentType ?? "none"}`,
    );
  }
  const text = await readLimited(c, limit);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new HttpError(400, "bad_request", `malformed JSON body: ${(err as Error).message}`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw validationFailed(parsed.error);
  return parsed.data;
}

/** Parses the query string with a schema (400 with field paths). */
export function readQuery<S extends z.ZodType>(c: Context, schema: S): z.infer<S> {
  const parsed = schema.safeParse(c.req.query());
  if (!parsed.success) throw validationFailed(parsed.error, "query parameters");
  return parsed.data;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A path id: ids are uuids, so anything else cannot exist (404, without asking Postgres). */
export function pathId(c: Context, name: string, what: string): string {
  const id = c.req.param(name) ?? "";
  if (!UUID.test(id)) throw new HttpError(404, "not_found", `${what} ${id} not found`);
  return id.toLowerCase();
}
