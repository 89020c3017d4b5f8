/**
 * Redaction for the configuration viewer: what in an MCP server's transport may carry a
 * secret (arguments, headers, URLs) shown as `***`, fail-closed (a false positive costs a
 * `***`, a false negative a leaked key).
 */

export const REDACTED = "***";

/** Option or header names whose value is a credential. */
const SECRET_NAME =
  /(token|passw(or)?d|passwd|secret|api[-_]?key|apikey|auth|credential|private[-_]?key|session[-_]?key|cookie|signature)/i;

/** Known credential prefixes at a token boundary (e.g. `sk-…`, `ghp_…`, `AKIA…`). */
const CREDENTIAL_PREFIX =
  /(^|[^A-Za-z0-9])(ghp_|gho_|ghs_|github_pat_|glpat-|xox[abpr]-|sk-|sk_|AKIA|Bearer\s)/;
/** header.payload.signature */
const JWT_LIKE = /eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+/;
/** 32 or more token-like characters in a row (slashes excluded, so paths survive). */
const LONG_TOKEN = /[A-Za-z0-9_+=-]{32,}/;

/** Whether a value looks like it embeds a live secret. */
export function looksSecret(value: string): boolean {
  return CREDENTIAL_PREFIX.test(value) || JWT_LIKE.test(value) || LONG_TOKEN.test(value);
}

/** Whether a name (an option, a header, a variable) says its value is a secret. */
export const isSecretName = (name: string): boolean => SECRET_NAME.test(name);

/**
 * A URL without credentials, query or fragment (they can carry keys), `{{.SESSION_ID}}`-style
 * templates kept readable; an unparsable one as written unless it looks secret.
 */
export function redactUrl(url: string | undefined): string | null {
  if (!url) return null;
  try {
    const { protocol, host, pathname } = new URL(url);
    if (!host) return looksSecret(url) ? REDACTED : url;
    return `${protocol}//${host}${pathname}`.replaceAll("%7B%7B", "{{").replaceAll("%7D%7D", "}}");
  } catch {
    return looksSecret(url) ? REDACTED : url;
  }
}

/**
 * A command line with its secrets as `***`: the value of an option named like a credential
 * (`--token X`, `--token=X`, `-p X` is left alone), `NAME=value` pairs with such a name, any
 * argument that looks like a secret itself, and credentials inside URL arguments.
 */
export function redactArgs(args: readonly string[]): string[] {
  const out: string[] = [];
  let secretNext = false;
  for (const arg of args) {
    if (secretNext) {
      secretNext = false;
      if (!arg.startsWith("-")) {
        out.push(REDACTED);
        continue;
      }
    }
    const option = /^(--?[A-Za-z0-9][A-Za-z0-9_.-]*)(=(.*))?$/.exec(arg);
    if (option?.[1] && isSecretName(option[1])) {
      if (option[2] === undefined) {
        out.push(arg);
        secretNext = true;
      } else {
        out.push(`${option[1]}=${REDACTED}`);
      }
      continue;
    }
    const pair = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(arg);
    if (pair?.[1] && isSecretName(pair[1])) {
      out.push(`${pair[1]}=${REDACTED}`);
      continue;
    }
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(arg)) {
      out.push(redactUrl(arg) ?? REDACTED);
      continue;
    }
    out.push(looksSecret(arg) ? REDACTED : arg);
  }
  return out;
}

/** Headers with the value of each credential-named or secret-looking one as `***`. */
export function redactHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [
      name,
      isSecretName(name) || looksSecret(value) ? REDACTED : value,
    ]),
  );
}
