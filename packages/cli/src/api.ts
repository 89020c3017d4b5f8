import { HttpErrorBodySchema } from "@tarsy/contracts";
import type { z } from "zod";
import type { CliEnv } from "./env.ts";
import { ApiRequestError, BadResponseError, UnreachableError } from "./errors.ts";

export interface ApiCall<T extends z.ZodType> {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  path: string;
  body?: unknown;
  schema: T;
}

/** One request to ingest-api; the answer is validated with `schema`, errors become CliErrors. */
export async function callApi<T extends z.ZodType>(
  env: CliEnv,
  call: ApiCall<T>,
): Promise<z.infer<T>> {
  const url = `${env.apiUrl}${call.path}`;
  const headers: Record<string, string> = { accept: "application/json" };
  if (call.body !== undefined) headers["content-type"] = "application/json";
  if (env.user) headers["x-forwarded-user"] = env.user;
  if (env.token) headers.authorization = `Bearer ${env.token}`;
  if (env.cookie) headers.cookie = env.cookie;
  let response: Response;
  try {
    response = await fetch(url, {
      method: call.method,
      headers,
      ...(call.body !== undefined && { body: JSON.stringify(call.body) }),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    throw new UnreachableError("the TARSy API", env.apiUrl, error);
  }
  const text = await response.text();
  const json = parseJson(text);
  if (!response.ok) {
    const parsed = HttpErrorBodySchema.safeParse(json);
    if (parsed.success) {
      throw new ApiRequestError(response.status, parsed.data.error.code, parsed.data.error.message);
    }
    throw new ApiRequestError(response.status, "http_error", text.slice(0, 200) || "no body");
  }
  const parsed = call.schema.safeParse(json);
  if (!parsed.success) {
    throw new BadResponseError(
      `unexpected answer from ${call.method} ${call.path}: ${parsed.error.issues[0]?.message ?? "invalid"}`,
    );
  }
  return parsed.data;
}

function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return undefined;
  }
}
