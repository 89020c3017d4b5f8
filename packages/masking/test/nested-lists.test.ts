import { describe, expect, it } from "vitest";
import { parseAllDocuments, stringify } from "yaml";
import {
  createMaskingService,
  type ServerMaskingConfig,
  TOOL_RESULT_REDACTED_NOTICE,
} from "../src/index.ts";

/**
 * Secrets inside a SecretList inside a List (and deeper), as `kubectl get secrets,configmaps -o
 * yaml|json` or an MCP server aggregating several lists prints them. Every Secret value must be
 * masked at any depth; ConfigMap data and every other byte stay exactly as they were.
 */

const KUBERNETES: ServerMaskingConfig = {
  enabled: true,
  pattern_groups: ["kubernetes"],
  patterns: [],
  custom_patterns: [],
};
const MARKER = "[MASKED_SECRET_DATA]";
const b64 = (value: string) => Buffer.from(value).toString("base64");

const secret = (name: string, data: Record<string, string>) => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name, namespace: "payments" },
  type: "Opaque",
  data,
});
const configMap = (name: string, data: Record<string, string>) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "payments" },
  data,
});
const list = (kind: string, items: unknown[]) => ({
  apiVersion: "v1",
  kind,
  items,
  metadata: { resourceVersion: "" },
});

/** Secret values under neutral keys: no regex pattern would catch them without the Secret masker. */
const S = {
  db: b64("db-pass-7Hq2x"),
  smtp: b64("smtp-pass-K9w"),
  deep: b64("deep-pass-Zr4"),
  deeper: b64("deeper-pass-Lm8"),
};
/** ConfigMap values, including one that looks like base64: all must survive. */
const C = { level: "debug", checksum: b64("not-a-secret"), url: "http://payments:8080/health" };

/** List → [ConfigMap, SecretList → [Secret, Secret]] */
const LIST_WITH_SECRET_LIST = list("List", [
  configMap("payments-config", { LOG_LEVEL: C.level, checksum: C.checksum }),
  list("SecretList", [
    secret("payments-db", { "db-creds": S.db }),
    secret("notifier", { "smtp-auth": S.smtp }),
  ]),
]);

/** List → [ConfigMap, List → [SecretList → [Secret], ConfigMap], Secret] */
const DEEP = list("List", [
  configMap("top-config", { LOG_LEVEL: C.level }),
  list("List", [
    list("SecretList", [secret("deep", { blob: S.deep, "app.ini": S.deeper })]),
    configMap("inner-config", { HEALTH_URL: C.url, checksum: C.checksum }),
  ]),
  secret("top", { "db-creds": S.db }),
]);

const yamlKubectl = (value: unknown) => stringify(value, { indentSeq: false });
const yamlIndented = (value: unknown) => stringify(value, { indentSeq: true });
const jsonPretty = (value: unknown) => `${JSON.stringify(value, null, 4)}\n`;
const jsonMinified = (value: unknown) => JSON.stringify(value);

/** The input with each Secret value span replaced by the quoted marker, nothing else changed. */
function expectedOutput(input: string, values: readonly string[], format: "yaml" | "json"): string {
  let out = input;
  for (const value of values) {
    const written = format === "json" ? `"${value}"` : value;
    expect(input.split(written)).toHaveLength(2);
    out = out.replace(written, JSON.stringify(MARKER));
  }
  return out;
}

/** Every data value of every resource of `kind`, at any depth of `items`. */
function dataOf(root: unknown, kind: string): string[] {
  const values: string[] = [];
  const visit = (node: unknown) => {
    if (!node || typeof node !== "object") return;
    const record = node as { kind?: unknown; data?: Record<string, string>; items?: unknown };
    if (record.kind === kind) values.push(...Object.values(record.data ?? {}));
    if (Array.isArray(record.items)) for (const item of record.items) visit(item);
  };
  visit(root);
  return values;
}

describe("Secrets nested in List / SecretList items (kubernetes group)", () => {
  const service = createMaskingService();

  it.each([
    {
      name: "List → SecretList, YAML (kubectl layout)",
      tree: LIST_WITH_SECRET_LIST,
      format: "yaml",
      write: yamlKubectl,
      secrets: [S.db, S.smtp],
    },
    {
      name: "List → SecretList, YAML (indented items)",
      tree: LIST_WITH_SECRET_LIST,
      format: "yaml",
      write: yamlIndented,
      secrets: [S.db, S.smtp],
    },
    {
      name: "List → SecretList, JSON (pretty)",
      tree: LIST_WITH_SECRET_LIST,
      format: "json",
      write: jsonPretty,
      secrets: [S.db, S.smtp],
    },
    {
      name: "List → SecretList, JSON (minified)",
      tree: LIST_WITH_SECRET_LIST,
      format: "json",
      write: jsonMinified,
      secrets: [S.db, S.smtp],
    },
    {
      name: "List → List → SecretList → Secret, YAML (kubectl layout)",
      tree: DEEP,
      format: "yaml",
      write: yamlKubectl,
      secrets: [S.deep, S.deeper, S.db],
    },
    {
      name: "List → List → SecretList → Secret, YAML (indented items)",
      tree: DEEP,
      format: "yaml",
      write: yamlIndented,
      secrets: [S.deep, S.deeper, S.db],
    },
    {
      name: "List → List → SecretList → Secret, JSON (pretty)",
      tree: DEEP,
      format: "json",
      write: jsonPretty,
      secrets: [S.deep, S.deeper, S.db],
    },
    {
      name: "List → List → SecretList → Secret, JSON (minified)",
      tree: DEEP,
      format: "json",
      write: jsonMinified,
      secrets: [S.deep, S.deeper, S.db],
    },
  ] as const)("$name", ({ tree, format, write, secrets }) => {
    const input = write(tree);
    const configValues = dataOf(tree, "ConfigMap");
    for (const value of [...secrets, ...configValues]) expect(input).toContain(value);

    const result = service.maskToolResult(input, KUBERNETES, { serverId: "kubernetes-server" });

    expect(result.failed).toBe(false);
    for (const value of secrets) expect(result.content).not.toContain(value);
    // Only the Secret value spans changed: ConfigMaps, keys, order and layout are as written.
    expect(result.content).toBe(expectedOutput(input, secrets, format));
    expect(result.redactions).toBe(secrets.length);

    const parsed =
      format === "json" ? JSON.parse(result.content) : parseAllDocuments(result.content)[0]?.toJS();
    expect(dataOf(parsed, "Secret")).toEqual(secrets.map(() => MARKER));
    expect(dataOf(parsed, "ConfigMap")).toEqual(configValues);
  });

  it("masks a Secret in the top-level items and in a nested SecretList of the same YAML List", () => {
    const input = [
      "apiVersion: v1",
      "kind: List",
      "items:",
      "- kind: Secret   # direct item",
      "  data:",
      `    creds: ${S.db}`,
      "- kind: SecretList",
      "  items:",
      "  - kind: Secret",
      "    metadata: {name: nested}",
      "    stringData:",
      `      blob: ${S.smtp}   # nested item`,
      "- kind: ConfigMap",
      "  data:",
      `    checksum: ${C.checksum}`,
      "",
    ].join("\n");
    const result = service.maskToolResult(input, KUBERNETES);
    expect(result.content).toBe(expectedOutput(input, [S.db, S.smtp], "yaml"));
    expect(result.redactions).toBe(2);
  });

  it("masks a SecretList inside a List printed under a title, as some MCP servers do", () => {
    const input = `The following resources (YAML) have been found:\n${yamlKubectl([
      LIST_WITH_SECRET_LIST,
    ])}`;
    const result = service.maskToolResult(input, KUBERNETES);
    expect(result.content).toBe(expectedOutput(input, [S.db, S.smtp], "yaml"));
    expect(result.redactions).toBe(2);
  });

  /** `levels` Lists around a SecretList holding one Secret. */
  const nestedLists = (levels: number) => {
    let node: unknown = list("SecretList", [secret("bottom", { blob: S.deep })]);
    for (let i = 0; i < levels; i++) node = list("List", [configMap(`cm-${i}`, { ...C }), node]);
    return node;
  };

  it.each([
    { name: "JSON", write: jsonMinified },
    { name: "YAML", write: yamlKubectl },
  ])("masks a Secret under 30 levels of Lists ($name)", ({ write }) => {
    const input = write(nestedLists(30));
    const result = service.maskToolResult(input, KUBERNETES);
    expect(result.failed).toBe(false);
    expect(result.content).not.toContain(S.deep);
    expect(result.content).toContain(MARKER);
    expect(result.redactions).toBe(1);
    expect(result.content.split(C.checksum)).toHaveLength(31);
  });

  it.each([
    { name: "JSON", write: jsonMinified },
    { name: "YAML", write: yamlKubectl },
  ])(
    "past the depth bound a Secret is never let through: the result is redacted ($name)",
    ({ write }) => {
      const logged: object[] = [];
      const logging = createMaskingService({
        logger: { warn() {}, error: (fields) => logged.push(fields) },
      });
      const input = write(nestedLists(40));
      const result = logging.maskToolResult(input, KUBERNETES);
      expect(result.failed).toBe(true);
      expect(result.content).toBe(TOOL_RESULT_REDACTED_NOTICE);
      expect(logged).toEqual([expect.objectContaining({ error_code: "masking_input_too_deep" })]);
      expect(JSON.stringify(logged)).not.toContain(S.deep);
    },
  );

  it("past the depth bound, Lists without a Secret are left as they are", () => {
    let node: unknown = configMap("bottom", C);
    for (let i = 0; i < 40; i++) node = list("List", [node]);
    const input = jsonPretty(list("List", [secret("top", { "db-creds": S.db }), node]));
    const result = service.maskToolResult(input, KUBERNETES);
    expect(result.failed).toBe(false);
    expect(result.content).toBe(expectedOutput(input, [S.db], "json"));
    expect(result.redactions).toBe(1);
  });
});
