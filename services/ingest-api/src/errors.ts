import type { HttpErrorBody, HttpErrorCode } from "@tarsy/contracts";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";

/**
 * An error that becomes an HTTP response with the one error shape
 * `{ error: { code, message, details? } }`. Thrown by routes, mapped by `onError`.
 */
export class HttpError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: HttpErrorCode,
    message: string,
    readonly details?: unknown,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "HttpError";
  }

  toBody(): HttpErrorBody {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.details === undefined ? {} : { details: this.details }),
      },
    };
  }
}

export interface FieldIssue {
  /** Dotted path of the field, e.g. `mcp.servers.0.name` (`(body)` for the whole body). */
  path: string;
  message: string;
}

/** One issue per field; an unknown-keys issue becomes one issue per unknown key. */
export function fieldIssues(error: z.ZodError): FieldIssue[] {
  return error.issues.flatMap((issue) => {
    const base = issue.path.map(String);
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => ({
        path: [...base, key].join("."),
        message: "unknown field",
      }));
    }
    return [{ path: base.length > 0 ? base.join(".") : "(body)", message: issue.message }];
  });
}

/** 400 `validation_failed`; the message names the fields, `details.fields` says what is wrong. */
export const validationFailed = (error: z.ZodError, what = "request body"): HttpError => {
  const fields = fieldIssues(error);
  const names = [...new Set(fields.map((f) => f.path))].join(", ");
  return new HttpError(400, "validation_failed", `invalid ${what}: ${names}`, { fields });
};

export const notFound = (what: string, id?: string): HttpError =>
  new HttpError(404, "not_found", id ? `${what} ${id} not found` : `${what} not found`);

export const unavailable = (message: string, cause?: unknown): HttpError =>
  new HttpError(503, "unavailable", message, undefined, { cause });

export const conflict = (message: string, details?: unknown): HttpError =>
  new HttpError(409, "conflict", message, details);
