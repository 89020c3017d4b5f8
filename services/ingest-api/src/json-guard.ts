/**
 * Checks on untrusted JSON text and values that keep every later step (JSON.parse,
 * masking, zod, Postgres) inside what it can handle.
 */

/**
 * The deepest nesting of arrays/objects in `text`, counted by a linear scan of brackets
 * outside strings, stopping as soon as `max` is exceeded. Run before `JSON.parse`, whose
 * recursion (and that of everything after it) a deep document would overflow.
 */
export function jsonDepthExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c /* \ */) i++;
      else if (ch === 0x22 /* " */) inString = false;
      continue;
    }
    if (ch === 0x22) inString = true;
    else if (ch === 0x7b /* { */ || ch === 0x5b /* [ */) {
      if (++depth > max) return true;
    } else if (ch === 0x7d /* } */ || ch === 0x5d /* ] */) depth--;
  }
  return false;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Why a string cannot be stored as text (Postgres rejects NUL, and a lone UTF-16
 * surrogate is not a character), or undefined when it can.
 */
export function unstorableReason(text: string): string | undefined {
  if (text.includes("\u0000")) return "contains a NUL character (\\u0000)";
  if (LONE_SURROGATE.test(text)) return "contains an unpaired UTF-16 surrogate";
  return undefined;
}

export interface UnstorableString {
  /** Dotted path of the field (`data.labels.pod`, `alerts.3.annotations`). */
  path: string;
  message: string;
}

/**
 * The first string (object key or value) in a parsed JSON value that cannot be stored, with
 * its path. Recursion is bounded by the depth check that ran before parsing.
 */
export function findUnstorableString(
  value: unknown,
  path: string[] = [],
): UnstorableString | undefined {
  const found = (reason: string, at: string[]) => ({
    path: at.length > 0 ? at.join(".") : "(body)",
    message: reason,
  });
  if (typeof value === "string") {
    const reason = unstorableReason(value);
    return reason ? found(reason, path) : undefined;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const hit = findUnstorableString(value[i], [...path, String(i)]);
      if (hit) return hit;
    }
    return undefined;
  }
  if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      const keyReason = unstorableReason(key);
      if (keyReason) return found(`key ${keyReason}`, [...path, JSON.stringify(key)]);
      const hit = findUnstorableString(item, [...path, key]);
      if (hit) return hit;
    }
  }
  return undefined;
}
