import type { CodeMasker, MaskOutcome } from "../masker.ts";
import { isPlaceholder, MASKED_FIELD_VALUE } from "./field-masker.ts";
import { isSecretName, secretFlagName } from "./names.ts";

/**
 * A flag and its value, in every framing a command line is printed in: `--token=v`,
 * `--token v`, `"--token", "v"` (JSON, also escaped inside a string), `- --token` / `- v`
 * (YAML), `--token` / `v` on the next line (`kubectl describe`), `[--token, v]`.
 */
const FLAG_VALUE =
  /(--?[A-Za-z][A-Za-z0-9_.-]*)(=\\?["']?|(?:(?:\r?\n|\\n)[ \t]*-[ \t]+|\\[nrt"']|[ \t\r\n"',])+)(?!\[MASKED_|\[REDACTED|-)([^\s"',\\[\]{}]+)/y;

/**
 * `name: value` / `name=value` with the name quoted or not (YAML, JSON, env files, query
 * strings, `kubectl describe`, JSON escaped inside a string). A bare name needs `=` or `: `
 * (`image: token-service:1.0` names nothing). The value is quoted (group 3, 4
 * or 5) or bare (group 7, after an optional auth scheme in group 6: `Authorization: Bearer …`).
 */
const KEY_VALUE =
  /(\\?["']?)([A-Za-z_][A-Za-z0-9_.-]{0,80}?)\1[ \t]*(?:=|:(?=[ \t])|(?<=["'][ \t]*):)[ \t]*(?:\\"((?:[^"\\]|\\[^"])*)\\"|"((?:[^"\\\r\n]|\\.)*)"|'([^'\r\n]*)'|(?![[|>{<(&*!])((?:[Bb]earer|BEARER|[Bb]asic|BASIC|[Tt]oken|[Dd]igest|[Nn]egotiate|Bot|ApiKey|SSWS)[ \t]+)?([^\s"',;&\\}\]]+))/y;

/**
 * Where a secret name may be: every name the judgement accepts holds one of these. Scanning for
 * them and looking around each hit is much cheaper than trying every word of the text.
 */
const SECRETISH = /pass|pw|secret|token|key|auth|cred|cookie|dsn|sig|pin/gi;
const NULL_OR_BOOL = /^(?:~|null|Null|NULL|true|True|TRUE|false|False|FALSE)$/;

/**
 * Masks secrets in text by the name they are given, whatever the format: values of
 * secret-bearing flags and of `name: value` / `NAME=value` assignments whose name is secret
 * (same judgement as the structural masker). Runs after it, so text that did not parse as
 * JSON or YAML (`kubectl describe`, logs, env dumps, shell commands) is covered too.
 */
export function createSecretAssignmentMasker(): CodeMasker {
  return {
    name: "secret_assignments",
    appliesTo: (content) => content.length > 0,
    mask: maskSecretAssignments,
  };
}

export function maskSecretAssignments(content: string): MaskOutcome {
  let text = content;
  let redactions = 0;
  for (const step of [maskNamed, ...PHRASES.map((phrase) => maskPhrase.bind(null, phrase))]) {
    const outcome = step(text);
    text = outcome.content;
    redactions += outcome.redactions;
  }
  return { content: text, redactions };
}

/**
 * Secrets said in a phrase rather than assigned: the `secret` group is masked when `accepts`
 * (given the match's groups) agrees.
 */
interface Phrase {
  regex: RegExp;
  /** Cheap test on the whole text before the regex runs. */
  hint: RegExp;
  accepts?: (groups: Record<string, string | undefined>) => boolean;
}

const PHRASES: Phrase[] = [
  // curl -u user:password, --user=user:password
  {
    regex: /(?<![A-Za-z0-9_.-])(?:-u|--user)(?:[ \t]+|=)(["']?)[^\s:"'@]+:(?<secret>[^\s"']+)\1/dg,
    hint: /-u|--user/,
  },
  // SQL: ALTER USER … WITH PASSWORD '…', CREATE USER … IDENTIFIED BY '…'
  {
    regex: /\b(?:PASSWORD|IDENTIFIED\s+BY)\s+'(?<secret>(?:[^'\r\n]|'')+)'/dgi,
    hint: /password|identified/i,
  },
  // .netrc: machine host login user password secret
  {
    regex: /\bmachine\s+\S+\s+login\s+\S+\s+password\s+(?<secret>\S+)/dg,
    hint: /machine/,
  },
  // XML: <password>…</password>, <ns:apiKey>…</ns:apiKey>
  {
    regex: /<(?<tag>[A-Za-z_][\w.:-]*)(?:\s[^<>]*)?>(?<secret>[^<]+)<\/\k<tag>>/dg,
    hint: /<\//,
    accepts: (groups) => {
      const tag = groups.tag ?? "";
      const name = tag.slice(tag.lastIndexOf(":") + 1);
      return SECRETISH_NAME.test(name) && isSecretName(name);
    },
  },
];

const SECRETISH_NAME = /pass|pw|secret|token|key|auth|cred|cookie|dsn|sig|pin/i;

function maskPhrase(phrase: Phrase, content: string): MaskOutcome {
  if (!phrase.hint.test(content)) return { content, redactions: 0 };
  let out = "";
  let copied = 0;
  let redactions = 0;
  phrase.regex.lastIndex = 0;
  for (let match = phrase.regex.exec(content); match; match = phrase.regex.exec(content)) {
    const span = match.indices?.groups?.secret;
    const secret = match.groups?.secret;
    if (!span || secret === undefined || isPlaceholder(secret.trim())) continue;
    if (phrase.accepts && !phrase.accepts(match.groups ?? {})) continue;
    out += content.slice(copied, span[0]) + MASKED_FIELD_VALUE;
    copied = span[1];
    redactions += 1;
  }
  if (redactions === 0) return { content, redactions };
  return { content: out + content.slice(copied), redactions };
}

function maskNamed(content: string): MaskOutcome {
  let out = "";
  let copied = 0;
  let redactions = 0;
  SECRETISH.lastIndex = 0;
  for (let hit = SECRETISH.exec(content); hit; hit = SECRETISH.exec(content)) {
    let start = hit.index;
    while (start > 0 && isNameChar(content.charCodeAt(start - 1))) start--;
    let wordEnd = hit.index + hit[0].length;
    while (wordEnd < content.length && isNameChar(content.charCodeAt(wordEnd))) wordEnd++;
    SECRETISH.lastIndex = wordEnd;
    if (start < copied) continue;
    const found = content.charCodeAt(start) === 45 ? flagAt(content, start) : keyAt(content, start);
    if (!found) continue;
    out += content.slice(copied, found.valueStart) + MASKED_FIELD_VALUE;
    copied = found.valueEnd;
    redactions += 1;
    SECRETISH.lastIndex = Math.max(wordEnd, found.valueEnd);
  }
  if (redactions === 0) return { content, redactions };
  return { content: out + content.slice(copied), redactions };
}

interface Found {
  valueStart: number;
  valueEnd: number;
}

/** A secret flag starting at `start` (the first dash) and its value. */
function flagAt(content: string, start: number): Found | null {
  FLAG_VALUE.lastIndex = start;
  const match = FLAG_VALUE.exec(content);
  if (!match) return null;
  const [whole, flag = "", , value = ""] = match;
  if (!secretFlagName(flag) || value.endsWith(":") || isPlaceholder(value)) return null;
  const valueEnd = start + whole.length;
  return { valueStart: valueEnd - value.length, valueEnd };
}

/** A `name: value` / `name=value` whose name starts at `start` (perhaps behind a quote). */
function keyAt(content: string, start: number): Found | null {
  // The name may be quoted, or quoted with escaped quotes inside a JSON string.
  const quote = content.charCodeAt(start - 1);
  const candidates =
    quote === 34 || quote === 39
      ? content.charCodeAt(start - 2) === 92
        ? [start - 2, start - 1, start]
        : [start - 1, start]
      : [start];
  for (const at of candidates) {
    // `scheme://user:password@host` is left to the URL pattern, which keeps the user.
    if (content.startsWith("://", at - 3)) return null;
    // A quoted name after `key: ` is a value (the text inside it may still be `name=value`).
    if (at < start && inValuePosition(content, at)) continue;
    KEY_VALUE.lastIndex = at;
    const match = KEY_VALUE.exec(content);
    if (!match) continue;
    const [whole, , key = "", escaped, doubled, single, , bare] = match;
    if (!isSecretName(key)) return null;
    const value = escaped ?? doubled ?? single ?? bare ?? "";
    if (value.trim() === "" || isPlaceholder(value) || (bare && NULL_OR_BOOL.test(bare))) {
      return null;
    }
    const closing = bare === undefined ? (escaped === undefined ? 1 : 2) : 0;
    const valueEnd = at + whole.length - closing;
    return { valueStart: valueEnd - value.length, valueEnd };
  }
  return null;
}

/** After `key: ` or `key=`: a quoted name there is a value (`"a": "password"`), not a key. */
function inValuePosition(content: string, at: number): boolean {
  let i = at - 1;
  while (i >= 0) {
    const c = content.charCodeAt(i);
    if (c !== 32 && c !== 9) break;
    i--;
  }
  const c = content.charCodeAt(i);
  return c === 58 || c === 61;
}

function isNameChar(c: number): boolean {
  return (
    (c >= 97 && c <= 122) ||
    (c >= 65 && c <= 90) ||
    (c >= 48 && c <= 57) ||
    c === 95 ||
    c === 45 ||
    c === 46
  );
}
