import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import {
  BUILTIN_PATTERN_GROUPS,
  createMaskingService,
  type ServerMaskingConfig,
} from "../src/index.ts";

/**
 * Masking invariants under generated input: masking is idempotent, and a corpus secret given a
 * secret-bearing name never comes through, whatever the framing (JSON, YAML, text, flags, env
 * items) and however deep it is nested, in a string included.
 */

const secrets = readFileSync(new URL("./corpus/must-mask.txt", import.meta.url), "utf8")
  .split("\n")
  .filter((line) => line !== "" && !line.startsWith("#"));

const configs: ServerMaskingConfig[] = [
  {
    enabled: true,
    pattern_groups: ["kubernetes"],
    patterns: ["certificate", "token", "email"],
    custom_patterns: [],
  },
  ...Object.keys(BUILTIN_PATTERN_GROUPS).map((group) => ({
    enabled: true,
    pattern_groups: [group],
    patterns: [],
    custom_patterns: [],
  })),
];

const NAMES = [
  "password",
  "db_password",
  "apiKey",
  "api-key",
  "clientSecret",
  "client_secret",
  "token",
  "accessToken",
  "secret",
  "privateKey",
  "passphrase",
  "credentials",
  "DB_PASSWORD",
  "GITHUB_TOKEN",
  "AWS_SECRET_ACCESS_KEY",
  "X-API-Key",
  "REDIS_AUTH",
];
const FLAGS = ["--password", "--token", "--api-key", "--client-secret", "--db-password", "-secret"];
const WRAPPERS = ["spec", "config", "settings", "items", "app", "containers", "values"];

type Framing<T> = (name: string, flag: string, secret: string) => T;

/** Structures that name the secret: a key, an env item, a flag and its value. */
const STRUCTURES: Framing<object>[] = [
  (name, _flag, secret) => ({ [name]: secret }),
  (name, _flag, secret) => ({
    env: [
      { name: "LOG_LEVEL", value: "debug" },
      { name, value: secret },
    ],
  }),
  (_name, flag, secret) => ({ args: ["--port", "8080", flag, secret, "--verbose"] }),
  (_name, flag, secret) => ({ command: ["/bin/app", `${flag}=${secret}`] }),
  (name, _flag, secret) => ({ Env: ["PATH=/usr/bin", `${name.toUpperCase()}=${secret}`] }),
];

/** Ways to print a structure. */
const PRINTERS: ((value: unknown) => string)[] = [
  (value) => JSON.stringify(value),
  (value) => JSON.stringify(value, null, 2),
  (value) => stringify(value),
  (value) => stringify(value, { indentSeq: false, lineWidth: 0 }),
  (value) => stringify(value, { defaultStringType: "QUOTE_DOUBLE", defaultKeyType: "PLAIN" }),
];

/** Plain-text framings of a named secret. */
const TEXTS: Framing<string>[] = [
  (name, _flag, secret) => `${name}=${secret}`,
  (name, _flag, secret) => `${name}: ${secret}`,
  (name, _flag, secret) => `export ${name.toUpperCase().replaceAll("-", "_")}="${secret}"`,
  (_name, flag, secret) => `exec /bin/app ${flag} ${secret} --verbose`,
  (_name, flag, secret) => `    Args:\n      ${flag}\n      ${secret}\n    State:  Running`,
  (name, _flag, secret) => `2026-11-22T03:01:12Z WARN login failed ${name}="${secret}" user=ops`,
];

/** Ways to hold a printed document inside another. */
const ENVELOPES: ((inner: string) => string)[] = [
  (inner) => inner,
  (inner) => JSON.stringify({ content: [{ type: "text", text: inner }], isError: false }),
  (inner) => stringify({ log: `${inner}\n` }),
  (inner) => `2026-11-22T03:01:12Z INFO tool output follows\n${inner}\n-- end --`,
  (inner) => JSON.stringify({ msg: "job spec", spec: inner }),
];

const nest = (value: unknown, path: string[]): unknown =>
  path.reduceRight<unknown>(
    (inner, key) => (key === "items" ? { items: [inner] } : { [key]: inner }),
    value,
  );

const framed = fc
  .record({
    secret: fc.constantFrom(...secrets),
    name: fc.constantFrom(...NAMES),
    flag: fc.constantFrom(...FLAGS),
    structured: fc.boolean(),
    structure: fc.constantFrom(...STRUCTURES),
    printer: fc.constantFrom(...PRINTERS),
    text: fc.constantFrom(...TEXTS),
    path: fc.array(fc.constantFrom(...WRAPPERS), { maxLength: 4 }),
    envelope: fc.constantFrom(...ENVELOPES),
    config: fc.constantFrom(...configs),
  })
  .map((c) => {
    const inner = c.structured
      ? c.printer(nest(c.structure(c.name, c.flag, c.secret), c.path))
      : c.text(c.name, c.flag, c.secret);
    return { ...c, document: c.envelope(inner) };
  });

/** How a secret may appear in the output: as written, or escaped inside a JSON string. */
const forms = (secret: string) => [secret, JSON.stringify(secret).slice(1, -1)];

describe("masking invariants (generated input)", () => {
  const service = createMaskingService();

  it("never lets a named corpus secret through, in any framing or nesting", () => {
    fc.assert(
      fc.property(framed, ({ document, secret, config }) => {
        const result = service.maskToolResult(document, config);
        expect(result.failed).toBe(false);
        for (const form of forms(secret)) expect(result.content).not.toContain(form);
      }),
      {
        numRuns: 1500,
        seed: Number(process.env.FUZZ_SEED ?? 20261125),
        interruptAfterTimeLimit: 20_000,
      },
    );
  });

  it("is idempotent: masking masked output changes and counts nothing", () => {
    const text = fc.oneof(
      framed.map((c) => c.document),
      fc.string({ maxLength: 300 }),
      fc.string({ unit: "grapheme", maxLength: 200 }),
      fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value, null, 2)),
      fc.jsonValue({ maxDepth: 4 }).map((value) => stringify(value)),
    );
    fc.assert(
      fc.property(text, fc.constantFrom(...configs), (input, config) => {
        const once = service.maskToolResult(input, config);
        const twice = service.maskToolResult(once.content, config);
        expect(twice.content).toBe(once.content);
        expect(twice.redactions).toBe(0);
      }),
      {
        numRuns: 1500,
        seed: Number(process.env.FUZZ_SEED ?? 20261126),
        interruptAfterTimeLimit: 20_000,
      },
    );
  });

  it("never fails on arbitrary input, and only ever shortens secrets into markers", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "binary", maxLength: 500 }),
        fc.constantFrom(...configs),
        (input, config) => {
          const result = service.maskToolResult(input, config);
          expect(result.failed).toBe(false);
          if (result.redactions === 0) expect(result.content).toBe(input);
          else expect(result.content).toContain("[MASKED_");
        },
      ),
      {
        numRuns: 1000,
        seed: Number(process.env.FUZZ_SEED ?? 20261127),
        interruptAfterTimeLimit: 15_000,
      },
    );
  });
});
