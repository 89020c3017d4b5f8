import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import type { SourceNode } from "../kubernetes/tree.ts";
import { parseYamlDocument } from "../kubernetes/yaml-tree.ts";
import { scanBlockYaml } from "./block-yaml.ts";

/** A tree reduced to what masking depends on: shape, keys, ranges and decoded strings. */
function canonical(node: SourceNode | null): unknown {
  if (!node) return null;
  switch (node.type) {
    case "map":
      return {
        map: node.pairs.map((p) => [p.key, canonical(p.value)]),
        at: [node.start, node.end],
      };
    case "seq":
      return { seq: node.items.map(canonical), at: [node.start, node.end] };
    case "scalar": {
      const empty = node.start === node.end;
      return empty ? { empty: true } : { text: node.text(), at: [node.start, node.end] };
    }
  }
}

function fast(text: string): unknown {
  const result = scanBlockYaml(text);
  return result.kind === "tree" ? canonical(result.root) : result.kind;
}

const key = fc.oneof(
  fc.constantFrom(
    "name",
    "value",
    "password",
    "data",
    "items",
    "env",
    "args",
    "kind",
    "a.b/c",
    "x-y",
  ),
  fc.string({ minLength: 1, maxLength: 12 }),
);
const scalar = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom(
    "--token",
    "true",
    "null",
    "~",
    "123",
    "1.5",
    "0x1f",
    "a: b",
    "#x",
    "- x",
    "'q'",
    '"d"',
    "|",
    "multi\nline\n",
    "  lead",
    "trail  ",
    '{"k":1}',
    "[1,2]",
    "&a",
    "*a",
    "!t",
    "@x",
    "%x",
    "",
    " ",
    "\t",
    "é ü 中文",
    "\\",
    "tab\there",
  ),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
);
const value = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: "small", withCrossShrink: true }, scalar, tie("map"), tie("seq")),
  map: fc.dictionary(key, tie("node"), { maxKeys: 5 }),
  seq: fc.array(tie("node"), { maxLength: 5 }),
})).node;

describe("scanBlockYaml", () => {
  it("builds the same tree as the YAML parser, or says the document is outside its subset", () => {
    const seen = { tree: 0, total: 0 };
    fc.assert(
      fc.property(
        value,
        fc.record({
          indentSeq: fc.boolean(),
          flow: fc.boolean(),
          lineWidth: fc.constantFrom(0, 20, 80),
          defaultStringType: fc.constantFrom(
            "PLAIN",
            "QUOTE_DOUBLE",
            "QUOTE_SINGLE",
            "BLOCK_LITERAL",
          ),
        }),
        (data, options) => {
          const text = stringify(data, {
            indentSeq: options.indentSeq,
            lineWidth: options.lineWidth,
            defaultStringType: options.defaultStringType as "PLAIN",
            collectionStyle: options.flow ? "any" : "block",
          });
          const got = fast(text);
          seen.total += 1;
          if (got === "unsupported") return;
          const want = parseYamlDocument(text, 0);
          if (got === "not-yaml") {
            expect(want === null || want.type === "scalar").toBe(true);
            return;
          }
          seen.tree += 1;
          expect(got).toEqual(canonical(want));
        },
      ),
      {
        numRuns: 1500,
        seed: Number(process.env.FUZZ_SEED ?? 20261125),
        interruptAfterTimeLimit: 20_000,
      },
    );
    // The comparison is only worth something if most documents stay on the fast path.
    expect(seen.tree / seen.total).toBeGreaterThan(0.45);
  });

  it("handles what kubectl prints without the full parser", () => {
    const text = [
      "apiVersion: v1",
      "items:",
      "- apiVersion: apps/v1",
      "  kind: Deployment",
      "  metadata:",
      "    annotations:",
      '      deployment.kubernetes.io/revision: "3"',
      "      kubectl.kubernetes.io/last-applied-configuration: |",
      '        {"apiVersion":"apps/v1","kind":"Deployment"}',
      "    labels: {}",
      "  spec:",
      "    template:",
      "      spec:",
      "        containers:",
      "        - args:",
      "          - --token",
      "          - tkn_live_0123456789",
      "          env:",
      "          - name: DB_PASSWORD # the database",
      "            value: 'hunter2'",
      "          image: registry.example.com/api:1.2.3",
      "kind: List",
      "metadata:",
      '  resourceVersion: ""',
      "",
    ].join("\n");
    const result = scanBlockYaml(text);
    expect(result.kind).toBe("tree");
    expect(fast(text)).toEqual(canonical(parseYamlDocument(text, 0)));
  });

  it("says not-yaml for logs and prose, unsupported for anchors and multi-line scalars", () => {
    expect(scanBlockYaml("2026-11-22T03:01:00Z INFO started\nsecond line\n").kind).toBe("not-yaml");
    expect(scanBlockYaml("a: &x 1\nb: *x\n").kind).toBe("unsupported");
    expect(scanBlockYaml("a: first\n  continued\n").kind).toBe("unsupported");
    expect(scanBlockYaml('a: "open\n  close"\n').kind).toBe("unsupported");
  });
});
