/**
 * Whether a name (a map key, an environment variable, a command-line flag) says that its value
 * is a secret. Names are split into words (`DB_PASSWORD`, `dbPassword`, `db-password`,
 * `client-key-data`, `X-API-Key` → db·password, client·key·data, x·api·key) and judged by
 * their words, so every spelling of one name gets one answer.
 */

/** A name holding one of these words names a secret (unless its last word is neutral). */
const SECRET_WORDS = new Set([
  "password",
  "passwords",
  "passwd",
  "passphrase",
  "secret",
  "secrets",
  "token",
  "tokens",
  "apikey",
  "apikeys",
  "credential",
  "credentials",
  "creds",
  "privatekey",
  "secretkey",
  "accesskey",
  "clientsecret",
  "authorization",
  "cookie",
  "cookies",
  "dsn",
  "signature",
]);

/** Words that name a secret only as the last word (`DB_PASS`, `REDIS_AUTH`), not inside one. */
const SECRET_LAST_WORDS = new Set(["pass", "pwd", "pw", "auth", "sig", "pin"]);

/** `…_KEY` names a secret after one of these words (`API_KEY`, `tls.key`, `AccountKey`). */
const KEY_QUALIFIERS = new Set([
  "access",
  "account",
  "admin",
  "api",
  "app",
  "auth",
  "client",
  "crypt",
  "decryption",
  "encryption",
  "hmac",
  "jwt",
  "license",
  "master",
  "private",
  "root",
  "secret",
  "service",
  "session",
  "shared",
  "sign",
  "signing",
  "ssh",
  "storage",
  "tls",
  "webhook",
]);

/**
 * A last word that makes the value something other than the secret itself: where it is
 * (`DB_PASSWORD_FILE`, `tokenUrl`), what it is called (`secretName`, `secretKeyRef`), or a
 * property of it (`tokenExpirationSeconds`, `PASSWORD_MIN_LENGTH`).
 */
const NEUTRAL_LAST_WORDS = new Set([
  "algorithm",
  "audience",
  "count",
  "dir",
  "directory",
  "disabled",
  "duration",
  "enabled",
  "endpoint",
  "env",
  "expiration",
  "expires",
  "expiry",
  "field",
  "file",
  "files",
  "format",
  "hash",
  "header",
  "id",
  "ids",
  "issuer",
  "kind",
  "len",
  "length",
  "lifetime",
  "location",
  "mode",
  "name",
  "names",
  "namespace",
  "path",
  "paths",
  "policy",
  "prefix",
  "provider",
  "ref",
  "refs",
  "required",
  "rotation",
  "seconds",
  "selector",
  "size",
  "source",
  "store",
  "suffix",
  "template",
  "ttl",
  "type",
  "uri",
  "url",
  "version",
]);

/** A word that ends in a secret word: `PGPASSWORD`, `AUTHTOKEN`, `APPSECRET`. */
const JOINED_SECRET = /(?:password|passwd|passphrase|secret|token|apikey|credentials)$/;

const WORD = /[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+/g;

/** The lowercase words of a name: `X-API-Key` → x, api, key; `dbPassword2` → db, password, 2. */
export function nameWords(name: string): string[] {
  const words: string[] = [];
  for (const match of name.matchAll(WORD)) words.push(match[0].toLowerCase());
  return words;
}

/** Names repeat (every `name`, `image`, `value` of a manifest): judged once each, up to a bound. */
const judged = new Map<string, boolean>();
const MAX_JUDGED = 8192;

/** True when the value of a key, variable or flag of this name is to be treated as a secret. */
export function isSecretName(name: string): boolean {
  let verdict = judged.get(name);
  if (verdict === undefined) {
    verdict = judge(name);
    if (judged.size >= MAX_JUDGED) judged.clear();
    judged.set(name, verdict);
  }
  return verdict;
}

function judge(name: string): boolean {
  if (name.length === 0 || name.length > 128) return false;
  const words = nameWords(name);
  const last = words.at(-1);
  if (last === undefined || NEUTRAL_LAST_WORDS.has(last)) return false;
  for (let i = 0; i < words.length; i++) {
    const word = words[i] ?? "";
    if (SECRET_WORDS.has(word) || JOINED_SECRET.test(word)) return true;
    const next = words[i + 1];
    // api·key, private·key (and api·keys) anywhere; client·key·data (kubeconfig).
    if (
      (next === "key" || next === "keys") &&
      (KEY_QUALIFIERS.has(word) || SECRET_WORDS.has(`${word}key`))
    ) {
      return true;
    }
  }
  if (SECRET_LAST_WORDS.has(last)) return true;
  return last === "data" && words.at(-2) === "key" && words.at(-3) === "client";
}

const FLAG = /^--?([A-Za-z][A-Za-z0-9_.-]*)$/;

/**
 * The name of a command-line flag that takes a secret as its value (`--token`, `--db-password`,
 * `-client-secret`), or null. Single-letter flags are never judged (`-p` is a port as often as
 * a password).
 */
export function secretFlagName(text: string): string | null {
  const match = FLAG.exec(text);
  const name = match?.[1];
  if (!name || name.length < 2) return null;
  return isSecretName(name) ? name : null;
}
