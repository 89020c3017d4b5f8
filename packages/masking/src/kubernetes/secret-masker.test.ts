import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { MaskingInputTooDeepError } from "../errors.ts";
import {
  createKubernetesSecretMasker,
  MAX_LIST_DEPTH,
  maskKubernetesSecrets,
} from "./secret-masker.ts";

const masker = createKubernetesSecretMasker();
const M = "[MASKED_SECRET_DATA]";

describe("kubernetes_secret masker", () => {
  it.each([
    {
      name: "SecretList in YAML",
      input:
        "apiVersion: v1\nkind: SecretList\nitems:\n- kind: Secret\n  data:\n    a: c2VjcmV0MQ==\n- kind: Secret\n  data:\n    b: c2VjcmV0Mg==\n",
      secrets: ["c2VjcmV0MQ==", "c2VjcmV0Mg=="],
      redactions: 2,
    },
    {
      name: "List with indented items, comments and keys after the items",
      input:
        'apiVersion: v1\nkind: List\nitems:\n  # first\n  - kind: ConfigMap\n    data:\n      a: keep\n\n  - kind: Secret\n    data:\n      b: c2VjcmV0Yg==\n      c: |\n        multi\n        line-c2VjcmV0Yw\nmetadata:\n  resourceVersion: ""\n',
      secrets: ["c2VjcmV0Yg==", "line-c2VjcmV0Yw"],
      redactions: 2,
    },
    {
      name: "a titled YAML list, as some MCP servers print it",
      input:
        "The following resources (YAML) have been found:\n- apiVersion: v1\n  kind: Secret\n  data:\n    token: dG9rZW4tdmFsdWU=\n  metadata:\n    name: api\n",
      secrets: ["dG9rZW4tdmFsdWU="],
      redactions: 1,
    },
    {
      name: "bare JSON array of resources",
      input:
        '[{"kind":"Secret","data":{"k":"c2VjcmV0"}},{"kind":"ConfigMap","data":{"k":"plain"}}]',
      secrets: ["c2VjcmV0"],
      redactions: 1,
    },
    {
      name: "multi-line stringData block scalar",
      input:
        "kind: Secret\nstringData:\n  app.conf: |\n    user=admin\n    pass=Sup3rS3cret\n  other: x\nmetadata:\n  name: s\n",
      secrets: ["Sup3rS3cret", "user=admin"],
      redactions: 2,
    },
    {
      name: "JSON string values with escapes",
      input: '{"kind": "Secret", "data": {"a": "x\\"y\\\\z-SECRETVALUE", "b\\u0041": "QUJD"}}',
      secrets: ["SECRETVALUE", "QUJD"],
      redactions: 2,
    },
    {
      name: "flow-style YAML with quoted keys",
      input: '{"kind": Secret, data: {"token": \'dG9rZW4=\', pw: "cHc="}}',
      secrets: ["dG9rZW4=", "cHc="],
      redactions: 2,
    },
    {
      name: "CRLF line endings",
      input: "kind: Secret\r\ndata:\r\n  password: cGFzc3dvcmQ=\r\nmetadata:\r\n  name: crlf\r\n",
      secrets: ["cGFzc3dvcmQ="],
      redactions: 1,
    },
    {
      name: "Secret in the third document of a stream",
      input:
        "kind: ConfigMap\ndata:\n  a: keep-me\n---\nkind: Service\nspec: {}\n---\nkind: Secret\ndata:\n  z: c2VjcmV0eg==\n",
      secrets: ["c2VjcmV0eg=="],
      redactions: 1,
    },
  ])("$name", ({ input, secrets, redactions }) => {
    expect(masker.appliesTo(input)).toBe(true);
    const result = masker.mask(input);
    for (const secret of secrets) expect(result.content).not.toContain(secret);
    expect(result.redactions).toBe(redactions);
    expect(result.content).toContain(M);
  });

  it.each([
    {
      name: "YAML List → SecretList → Secret",
      input:
        "kind: List\nitems:\n- kind: ConfigMap\n  data:\n    a: keep-me\n- kind: SecretList\n  items:\n  - kind: Secret\n    data:\n      b: c2VjcmV0Yg==\n",
      masked: ["c2VjcmV0Yg=="],
    },
    {
      name: "JSON List → List → SecretList → Secret",
      input:
        '{"kind":"List","items":[{"kind":"ConfigMap","data":{"a":"keep-me"}},{"kind":"List","items":[{"kind":"SecretList","items":[{"kind":"Secret","data":{"b":"c2VjcmV0Yg=="},"stringData":{"c":"plain-secret"}}]}]}]}',
      masked: ['"c2VjcmV0Yg=="', '"plain-secret"'],
    },
    {
      name: "bare JSON array holding a SecretList",
      input:
        '[{"kind":"ConfigMap","data":{"a":"keep-me"}},{"kind":"SecretList","items":[{"kind":"Secret","data":{"b":"c2VjcmV0Yg=="}}]}]',
      masked: ['"c2VjcmV0Yg=="'],
    },
  ])("masks Secrets in nested Lists, only their values: $name", ({ input, masked }) => {
    const result = maskKubernetesSecrets(input);
    expect(result.content).toBe(
      masked.reduce((text, value) => text.replace(value, JSON.stringify(M)), input),
    );
    expect(result.redactions).toBe(masked.length);
  });

  it("throws MaskingInputTooDeepError for a Secret below MAX_LIST_DEPTH nested Lists", () => {
    const nest = (levels: number, inner: object): object =>
      levels === 0 ? inner : { kind: "List", items: [nest(levels - 1, inner)] };
    const secret = { kind: "Secret", data: { b: "c2VjcmV0Yg==" } };
    const atBound = JSON.stringify(nest(MAX_LIST_DEPTH, secret));
    expect(maskKubernetesSecrets(atBound).content).not.toContain("c2VjcmV0Yg==");
    const tooDeep = JSON.stringify(nest(MAX_LIST_DEPTH + 1, secret));
    expect(() => maskKubernetesSecrets(tooDeep)).toThrow(MaskingInputTooDeepError);
    const harmless = JSON.stringify({
      kind: "List",
      items: [secret, nest(MAX_LIST_DEPTH + 1, { kind: "ConfigMap", data: { a: "keep-me" } })],
    });
    expect(maskKubernetesSecrets(harmless)).toEqual({
      content: harmless.replace('"c2VjcmV0Yg=="', JSON.stringify(M)),
      redactions: 1,
    });
  });

  it("keeps keys, comments and untouched documents exactly as written", () => {
    const input = [
      "# fetched by kubernetes-mcp-server",
      "kind: ConfigMap",
      "data:",
      "  color:   blue    # spacing kept",
      "---",
      "kind: Secret",
      "data:",
      "  password: aHVudGVyMg==  # rotated weekly",
      "  empty:",
      "metadata: {name: creds}",
      "",
    ].join("\n");
    const result = maskKubernetesSecrets(input);
    expect(result.content).toBe(input.replace("aHVudGVyMg==", `"${M}"`));
    expect(result.redactions).toBe(1);
    const docs = parseAllDocuments(result.content).map((doc) => doc.toJS());
    expect(docs[1]).toEqual({
      kind: "Secret",
      data: { password: M, empty: null },
      metadata: { name: "creds" },
    });
  });

  it("masks a Secret held in the last-applied-configuration annotation, keeping it valid JSON", () => {
    const applied = JSON.stringify({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "s", annotations: {} },
      stringData: { password: "Pl41nTextPassw0rd" },
    });
    const input = `kind: Secret\nmetadata:\n  name: s\n  annotations:\n    kubectl.kubernetes.io/last-applied-configuration: '${applied}'\ndata:\n  password: UGw0MW5UZXh0UGFzc3cwcmQ=\n`;
    const result = maskKubernetesSecrets(input);
    expect(result.content).not.toContain("Pl41nTextPassw0rd");
    expect(result.redactions).toBe(2);
    const doc = parse(result.content) as { metadata: { annotations: Record<string, string> } };
    const annotation = doc.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"];
    expect(JSON.parse(annotation ?? "")).toMatchObject({ stringData: { password: M } });
  });

  it("drops a last-applied-configuration Secret that is cut off and cannot be parsed", () => {
    const input =
      'kind: Secret\nmetadata:\n  annotations:\n    kubectl.kubernetes.io/last-applied-configuration: \'{"kind":"Secret","stringData":{"password":"Pl41nTextPassw0rd\'\n  name: s\n';
    const result = maskKubernetesSecrets(input);
    expect(result.content).not.toContain("Pl41nTextPassw0rd");
    expect(result.content).toContain("kubectl.kubernetes.io/last-applied-configuration: ");
    expect(result.redactions).toBe(1);
  });

  it("leaves other kinds alone, even with a ConfigMap in last-applied-configuration", () => {
    const applied = JSON.stringify({ kind: "ConfigMap", data: { mode: "Secret-less" } });
    const input = JSON.stringify(
      {
        kind: "ConfigMap",
        data: { mode: "Secret-less" },
        metadata: { annotations: { x: applied } },
      },
      null,
      2,
    );
    expect(maskKubernetesSecrets(input)).toEqual({ content: input, redactions: 0 });
  });

  it.each([
    {
      name: "pretty JSON cut off mid-Secret",
      input:
        '{\n    "kind": "Secret",\n    "data": {\n        "password": "c2VjcmV0",\n        "token": "dG9r',
      secrets: ["c2VjcmV0", "dG9r"],
      kept: ['"password": ', '"kind": "Secret",'],
      redactions: 2,
    },
    {
      name: "YAML with a tab indent",
      input:
        "kind: Secret\ndata:\n\tpassword: c2VjcmV0\n  tls.key: |\n    LS0tLS1CRUdJTg\nmetadata:\n  name: x\n",
      secrets: ["c2VjcmV0", "LS0tLS1CRUdJTg"],
      kept: ["\tpassword: ", "  tls.key: ", "metadata:\n  name: x"],
      redactions: 3,
    },
    {
      name: "prose before the YAML",
      input: "Here is the Secret:\nkind: Secret\n  data: {a: c2VjcmV0}\n",
      secrets: ["c2VjcmV0"],
      kept: ["Here is the Secret:\nkind: Secret\n  data: "],
      redactions: 1,
    },
  ])(
    "masks data line by line when a Secret does not parse: $name",
    ({ input, secrets, redactions }) => {
      const result = maskKubernetesSecrets(input);
      for (const secret of secrets) expect(result.content).not.toContain(secret);
      expect(result.content).toContain("kind: Secret".slice(0, 4));
      expect(result.redactions).toBe(redactions);
    },
  );

  it("leaves unparseable text without a data block to the regexes", () => {
    const minified = '{"kind": "Secret", "metadata": {"name": "a"}, "type": "Opa';
    expect(maskKubernetesSecrets(minified)).toEqual({ content: minified, redactions: 0 });
  });

  it("does not apply to text that merely mentions Secrets", () => {
    const events =
      'Warning  FailedMount  secret "db" not found; create the Secret (kind: Secret) first';
    expect(masker.appliesTo(events)).toBe(false);
    expect(masker.appliesTo("kind: SecretProviderClass\n")).toBe(false);
    expect(maskKubernetesSecrets(events)).toEqual({ content: events, redactions: 0 });
  });
});
