import type { z } from "zod";
import type { ConfigIssue } from "./errors.ts";
import { formatPath } from "./interpolate.ts";

/** A key the schema does not know; it is dropped and reported as a warning. */
export interface IgnoredKey {
  file: string;
  path: string;
  key: string;
}

export interface ParseOutcome<T> {
  data?: T;
  issues: ConfigIssue[];
  ignored: IgnoredKey[];
}

type Segment = string | number;

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let node = root;
  for (const segment of path) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<PropertyKey, unknown>)[segment];
  }
  return node;
}

function messageFor(issue: z.core.$ZodIssue, input: unknown): string {
  if (valueAt(input, issue.path) === undefined && issue.code !== "custom") return "is required";
  return issue.message.replace(/^Invalid input: /, "").replace(/^Invalid option: /, "");
}

/**
 * Parses one entry (a chain, an agent, a section) with a strict schema. Unrecognised keys are
 * removed and returned as `ignored`; every other problem becomes an issue with its full path.
 */
export function parseEntry<S extends z.ZodType>(
  schema: S,
  input: unknown,
  file: string,
  basePath: readonly Segment[],
): ParseOutcome<z.output<S>> {
  const working: unknown = input === undefined ? undefined : structuredClone(input);
  const ignored: IgnoredKey[] = [];
  for (let attempt = 0; attempt < 5; attempt++) {
    const result = schema.safeParse(working);
    if (result.success) return { data: result.data, issues: [], ignored };
    const issues: ConfigIssue[] = [];
    let removed = false;
    for (const issue of result.error.issues) {
      const path = [...basePath, ...(issue.path as Segment[])];
      if (issue.code === "unrecognized_keys") {
        const holder = valueAt(working, issue.path) as Record<string, unknown> | undefined;
        for (const key of issue.keys) {
          ignored.push({ file, path: formatPath([...path, key]), key });
          if (holder) delete holder[key];
          removed = true;
        }
        continue;
      }
      issues.push({ file, path: formatPath(path), message: messageFor(issue, working) });
    }
    if (issues.length > 0 || !removed) return { issues, ignored };
  }
  return {
    issues: [{ file, path: formatPath(basePath), message: "could not be parsed" }],
    ignored,
  };
}
