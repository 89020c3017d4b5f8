import { readFileSync } from "node:fs";

/**
 * The `Cookie` header value held by `TARSY_COOKIE_FILE`, for a TARSy behind oauth2-proxy.
 * The file is either
 *  - the cookie itself: one line `_oauth2_proxy=VALUE` (several `name=value` pairs may be
 *    separated by `; ` or by new lines), as copied from the browser; or
 *  - a Netscape cookie jar (`curl -c`, browser exports): tab-separated lines
 *    `domain flag path secure expiry name value`, of which every cookie is sent.
 * `#` comment lines and blank lines are skipped (`#HttpOnly_` jar lines are cookies).
 */
export function parseCookieFile(text: string): string {
  const pairs: string[] = [];
  for (const raw of text.split(/\r?\n/)) {
    let line = raw.trim();
    if (line.startsWith("#HttpOnly_")) line = line.slice("#HttpOnly_".length);
    else if (!line || line.startsWith("#")) continue;
    const fields = line.split("\t");
    if (fields.length === 7) {
      const [name, value] = fields.slice(5) as [string, string];
      if (name) pairs.push(`${name}=${value}`);
      continue;
    }
    for (const part of line.split(";")) {
      const pair = part.trim();
      if (!pair) continue;
      if (!/^[^=\s]+=\S*$/.test(pair)) {
        throw new Error(`"${pair.slice(0, 40)}" is not a name=value cookie nor a cookie jar line`);
      }
      pairs.push(pair);
    }
  }
  if (pairs.length === 0) throw new Error("it holds no cookie");
  return pairs.join("; ");
}

/** Reads `TARSY_COOKIE_FILE`; an unreadable or empty file is an error naming the variable. */
export function readCookieFile(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new CookieFileError(path, (error as Error).message);
  }
  try {
    return parseCookieFile(text);
  } catch (error) {
    throw new CookieFileError(path, (error as Error).message);
  }
}

export class CookieFileError extends Error {
  readonly code = "cli_cookie_file" as const;
  constructor(path: string, why: string) {
    super(`TARSY_COOKIE_FILE ${path}: ${why}`);
    this.name = "CookieFileError";
  }
}
