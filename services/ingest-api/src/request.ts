import type { Context } from "hono";
import type { z } from "zod";
import { identityOf } from "./access.ts";
import { HttpError, validationFailed } from "./errors.ts";
import { findUnstorableString, jsonDepthExceeds, unstorableReason } from "./json-guard.ts";

/**
 * Author of a request: the caller's identity (`X-Forwarded-User` > `X-Forwarded-Email` >
 * `X-Remote-User` from a trusted proxy, `token:<name>` for an API token), else `api-client`.
 */
export function authorOf(c: Context): string {
  return identityOf(c).user;
}

function isJsonContentType(value: string | undefined): boolean {
  if (!value) return false;
  const type = value.split(";")[0]?.trim().toLowerCase() ?? "";
  return type === "application/json" || (type.startsWith("application/") && type.endsWith("+json"));
}

/** The `charset` parameter of a content type (lower case), if any. */
function charsetOf(value: string): string | undefined {
  for (const param of value.split(";").slice(1)) {
    const [name = "", ...rest] = param.split("=");
    if (name.trim().toLowerCase() === "charset") {
      return rest
        .join("=")
        .trim()
        .replace(/^"(.*)"$/, "$1")
        .toLowerCase();
    }
  }
  return undefined;
}

const UTF8_CHARSETS = new Set(["utf-8", "utf8"]);

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
    let chunk: Awaited<ReturnType<typeof reader.read>>;
    try {
      chunk = await reader.read();
    } catch (err) {
      // The client closed the connection (or lied about Content-Length) mid-body.
      throw new HttpError(
        400,
        "bad_request",
        "the request body ended before it was complete",
        undefined,
        {
          cause: err,
        },
      );
    }
    const { done, value } = chunk;
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  return decodeUtf8(Buffer.concat(chunks));
}

/** Strict UTF-8: invalid bytes are a 400, never silently replaced by U+FFFD. */
function decodeUtf8(bytes: Uint8Array): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new HttpError(400, "bad_request", "request body is not valid UTF-8");
  }
}

const tooLarge = (limit: number) =>
  new HttpError(413, "payload_too_large", `request body exceeds ${limit} bytes`, { limit });

export interface ReadJsonOptions {
  /** Largest body in bytes (413 past it). */
  limit: number;
  /** Deepest nesting of arrays/objects (400 `too_deep` past it). */
  maxDepth: number;
  /** Runs on the parsed value before the schema (e.g. a cheap count limit); throws to reject. */
  precheck?: (value: unknown) => void;
}

/**
 * Parses a JSON request body: 415 unless the content type is JSON in UTF-8, 413 past
 * `limit` bytes, 400 for invalid UTF-8, nesting past `maxDepth`, malformed JSON or a string
 * Postgres cannot store (NUL, unpaired surrogate; the field is named), 400 with field paths
 * when the schema rejects it.
 */
export async function readJson<S extends z.ZodType>(
  c: Context,
  schema: S,
  options: ReadJsonOptions,
): Promise<z.infer<S>> {
  assertJsonContentType(c.req.header("content-type"));
  return parseJsonBody(await readLimited(c, options.limit), schema, options);
}

/**
 * `readJson` for a body that may be left out: an empty (or blank) body, with or without a
 * content type, is `undefined`; any other body is checked exactly as `readJson` does.
 */
export async function readOptionalJson<S extends z.ZodType>(
  c: Context,
  schema: S,
  options: ReadJsonOptions,
): Promise<z.infer<S> | undefined> {
  const text = await readLimited(c, options.limit);
  if (text.trim() === "") return undefined;
  assertJsonContentType(c.req.header("content-type"));
  return parseJsonBody(text, schema, options);
}

function assertJsonContentType(contentType: string | undefined): void {
  if (!isJsonContentType(contentType)) {
    throw new HttpError(
      415,
      "unsupported_media_type",
      `expected Content-Type application/json, got ${contentType ?? "none"}`,
    );
  }
  const charset = charsetOf(contentType ?? "");
  if (charset !== undefined && !UTF8_CHARSETS.has(charset)) {
    throw new HttpError(
      415,
      "unsupported_media_type",
      `JSON bodies must be UTF-8, got charset=${charset}`,
    );
  }
}

function parseJsonBody<S extends z.ZodType>(
  text: string,
  schema: S,
  options: ReadJsonOptions,
): z.infer<S> {
  if (jsonDepthExceeds(text, options.maxDepth)) {
    throw new HttpError(
      400,
      "too_deep",
      `JSON body is nested deeper than ${options.maxDepth} levels`,
      { limit: options.maxDepth },
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new HttpError(400, "bad_request", `malformed JSON body: ${(err as Error).message}`);
  }
  const unstorable = findUnstorableString(value);
  if (unstorable) {
    throw new HttpError(
      400,
      "validation_failed",
      `invalid request body: ${unstorable.path} ${unstorable.message}`,
      {
        fields: [unstorable],
      },
    );
  }
  options.precheck?.(value);
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw validationFailed(parsed.error);
  return parsed.data;
}

/**
 * Parses the query string with a schema: 400 naming the parameter when the schema rejects
 * it (unknown parameters included) or when a value cannot be stored or searched (NUL).
 */
export function readQuery<S extends z.ZodType>(c: Context, schema: S): z.infer<S> {
  const query = c.req.query();
  for (const [name, value] of Object.entries(query)) {
    const reason = unstorableReason(name) ?? unstorableReason(value);
    if (reason) {
      throw new HttpError(400, "validation_failed", `invalid query parameter ${name}: ${reason}`, {
        fields: [{ path: name, message: reason }],
      });
    }
  }
  const parsed = schema.safeParse(query);
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
