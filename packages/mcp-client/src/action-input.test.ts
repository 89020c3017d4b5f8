import { describe, expect, it } from "vitest";
import { coerceValue, parseActionInput } from "./action-input.ts";

describe("parseActionInput: JSON → JSON non-object → structured YAML → key-value → raw", () => {
  const table: Array<{ name: string; input: string; expected: Record<string, unknown> }> = [
    { name: "empty input", input: "   ", expected: {} },
    {
      name: "JSON object",
      input: '{"namespace": "default", "limit": 5}',
      expected: { namespace: "default", limit: 5 },
    },
    {
      name: "JSON object keeps nesting",
      input: '{"a": {"b": [1, 2]}}',
      expected: { a: { b: [1, 2] } },
    },
    { name: "JSON string", input: '"just a string"', expected: { input: "just a string" } },
    { name: "JSON array", input: '["a", "b"]', expected: { input: ["a", "b"] } },
    { name: "JSON number", input: "42", expected: { input: 42 } },
    { name: "JSON boolean", input: "true", expected: { input: true } },
    {
      name: "YAML with a list",
      input: "namespace: prod\nlabels:\n  - app=web\n  - tier=front",
      expected: { namespace: "prod", labels: ["app=web", "tier=front"] },
    },
    {
      name: "YAML with a nested map",
      input: "selector:\n  app: web\n  tier: front\nnamespace: prod",
      expected: { selector: { app: "web", tier: "front" }, namespace: "prod" },
    },
    {
      name: "flow YAML map",
      input: "{namespace: prod, names: [a, b]}",
      expected: { namespace: "prod", names: ["a", "b"] },
    },
    { name: "single key: value", input: "namespace: default", expected: { namespace: "default" } },
    {
      name: "comma-separated pairs with coercion",
      input: "namespace: kube-system, limit: 10, verbose: true, ratio: 0.5, owner: none",
      expected: { namespace: "kube-system", limit: 10, verbose: true, ratio: 0.5, owner: null },
    },
    {
      name: "key=value pairs on lines",
      input: "namespace=default\nname=web-1\nfollow=FALSE",
      expected: { namespace: "default", name: "web-1", follow: false },
    },
    {
      name: "quoted value stays a string",
      input: 'code: "0042", flag: "true"',
      expected: { code: "0042", flag: "true" },
    },
    {
      name: "value with = inside key=value",
      input: "selector=app=web",
      expected: { selector: "app=web" },
    },
    {
      name: "plain text",
      input: "show me the pods in prod",
      expected: { input: "show me the pods in prod" },
    },
    {
      name: "text with a comma that is not pairs",
      input: "namespace: prod, and also the logs",
      expected: { input: "namespace: prod, and also the logs" },
    },
    {
      name: "broken JSON falls through to raw",
      input: '{"namespace": ',
      expected: { input: '{"namespace":' },
    },
    { name: "bare word", input: "default", expected: { input: "default" } },
  ];
  for (const row of table) {
    it(row.name, () => {
      expect(parseActionInput(row.input)).toEqual(row.expected);
    });
  }
});

describe("coerceValue", () => {
  const table: Array<[string, unknown]> = [
    ["true", true],
    ["False", false],
    ["null", null],
    ["None", null],
    ["17", 17],
    ["-3", -3],
    ["2.5", 2.5],
    ["1e3", 1000],
    ["99999999999999999999", "99999999999999999999"],
    ["web-1", "web-1"],
    ["'quoted'", "quoted"],
    ["  spaced  ", "spaced"],
  ];
  for (const [input, expected] of table) {
    it(`${JSON.stringify(input)} → ${JSON.stringify(expected)}`, () => {
      expect(coerceValue(input)).toEqual(expected);
    });
  }
});
