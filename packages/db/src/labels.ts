/**
 * Session labels (`alert_sessions.labels`, and an executive summary's on `agent_executions`):
 * a JSON array of canonical names, `[]` for none, SQL NULL while unlabelled.
 */
import { Prisma } from "./generated/prisma/client.ts";

/** The column value to write: the names, or SQL NULL (never JSON `null`). */
export function labelsColumn(
  labels: readonly string[] | null,
): Prisma.InputJsonValue | typeof Prisma.DbNull {
  return labels === null ? Prisma.DbNull : [...labels];
}

/** A stored labels value as names; null unless it is an array of strings. */
export function storedLabels(value: Prisma.JsonValue | null | undefined): string[] | null {
  if (!Array.isArray(value)) return null;
  return value.every((item) => typeof item === "string") ? (value as string[]) : null;
}
