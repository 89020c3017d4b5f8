import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { createMaskingService, type ServerMaskingConfig } from "../src/index.ts";

/**
 * Real-world-looking tool output (kubectl -o yaml / -o json, logs, files) through the masking
 * service with the kubernetes-server config TARSy ships. Every planted secret must disappear;
 * ConfigMap data and ordinary fields must survive.
 */

const fixture = (name: string) =>
  readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8");
const planted = JSON.parse(fixture("planted.json")) as Record<string, string>;

/** The kubernetes-server built-in: `pattern_groups: [kubernetes]` + certificate, token, email. */
const KUBERNETES_SERVER: ServerMaskingConfig = {
  enabled: true,
  pattern_groups: ["kubernetes"],
  patterns: ["certificate", "token", "email"],
  custom_patterns: [],
};

const b64 = (value: string) => Buffer.from(value).toString("base64");

/** Every planted secret in the forms it can appear in: raw, base64, and each PEM body line. */
function plantedForms(text: string): string[] {
  const forms = new Set<string>();
  for (const [name, value] of Object.entries(planted)) {
    forms.add(value);
    if (!name.startsWith("pem_")) forms.add(b64(value));
  }
  return [...forms].filter((form) => text.includes(form));
}

/** Values of every Secret's data/stringData, found by an independent parse of the input. */
function secretValues(text: string): string[] {
  const values: string[] = [];
  const visit = (resource: unknown) => {
    if (!resource || typeof resource !== "object") return;
    const record = resource as Record<string, unknown>;
    if (record.kind === "Secret") {
      for (const field of ["data", "stringData"]) {
        const data = record[field] as Record<string, unknown> | undefined;
        for (const value of Object.values(data ?? {})) {
          if (typeof value !== "string") continue;
          // Multi-line values (block scalars) appear indented in the text: check line by line.
          for (const line of value.split("\n")) if (line.trim()) values.push(line.trim());
        }
      }
      const annotations = (record.metadata as { annotations?: Record<string, string> } | undefined)
        ?.annotations;
      for (const annotation of Object.values(annotations ?? {})) {
        if (annotation.trimStart().startsWith("{")) visit(JSON.parse(annotation));
      }
    }
    if (Array.isArray(record.items)) for (const item of record.items) visit(item);
  };
  for (const doc of parseAllDocuments(text) as unknown as {
    toJS(): unknown;
    errors: unknown[];
  }[]) {
    if (doc.errors.length === 0) visit(doc.toJS());
  }
  return values;
}

interface Row {
  fixture: string;
  redactions: number;
  /** Strings that must still be there after masking. */
  kept: string[];
  /** The structural masker only replaced values: same lines, changed ones hold a marker. */
  sameLines?: boolean;
  /** The output must still parse as YAML/JSON with every Secret value masked. */
  parses?: "yaml" | "json";
}

const ROWS: Row[] = [
  {
    fixture: "secret-opaque.yaml",
    redactions: 6,
    kept: ["  password: ", "  stripe-api-key: ", "name: payments-db", 'resourceVersion: "184467"'],
    sameLines: true,
    parses: "yaml",
  },
  {
    fixture: "secret-tls.json",
    redactions: 4,
    kept: ['"tls.crt": ', '"tls.key": ', '"type": "kubernetes.io/tls"', '"name": "payments-tls"'],
    sameLines: true,
    parses: "json",
  },
  {
    fixture: "list-mixed.yaml",
    redactions: 5,
    kept: [
      "LOG_LEVEL: debug",
      "PAYMENT_PROVIDER: stripe",
      "spring.datasource.url=jdbc:postgresql://payments-db:5432/payments",
      "smtp-password: ",
      "kubernetes.io/service-account.name: payments-api",
    ],
    sameLines: true,
    parses: "yaml",
  },
  {
    fixture: "list-mixed.json",
    redactions: 5,
    kept: [
      '"LOG_LEVEL": "debug"',
      '"RETRY_BACKOFF": "250ms"',
      "spring.datasource.url=jdbc:postgresql://payments-db:5432/payments\\n",
      '"webhook-secret": ',
    ],
    sameLines: true,
    parses: "json",
  },
  {
    fixture: "deployment.yaml",
    redactions: 6,
    kept: [
      "- name: LOG_LEVEL\n          value: debug",
      "- name: GITHUB_TOKEN",
      "secretKeyRef:\n              key: smtp-password",
      "@payments-db.payments.svc:5432/payments",
      "image: registry.example.com/payments/api:1.42.0",
    ],
    sameLines: true,
  },
  {
    fixture: "multi-doc.yaml",
    redactions: 8,
    kept: [
      "LOG_LEVEL: debug",
      "feature.refunds=true",
      "# Source: payments/templates/secret.yaml",
      "- name: DB_PASSWORD",
    ],
  },
  { fixture: "pem.txt", redactions: 2, kept: ["cat /etc/tls/tls.key /etc/tls/tls.crt"] },
  { fixture: "aws-credentials.txt", redactions: 2, kept: ["[default]", "region = eu-west-1"] },
  {
    fixture: "pod-logs.txt",
    redactions: 4,
    kept: ["card_declined", "customer=cus_Q2w3E4", "Authorization: Bearer ", "@github.com/example"],
  },
  {
    fixture: "malformed-secret.yaml",
    redactions: 1,
    kept: ["name: broken", "\tnamespace: payments"],
    sameLines: true,
  },
  { fixture: "configmap.yaml", redactions: 0, kept: [] },
  { fixture: "mentions-secret.txt", redactions: 0, kept: [] },
];

describe("masking kubectl-like tool output (kubernetes-server config)", () => {
  const service = createMaskingService();

  it.each(ROWS)("$fixture: no planted secret survives, the rest does", (row) => {
    const input = fixture(row.fixture);
    const mustGo = [...plantedForms(input), ...secretValues(input)];
    for (const secret of mustGo) expect(input).toContain(secret);

    const result = service.maskToolResult(input, KUBERNETES_SERVER, {
      serverId: "kubernetes-server",
    });

    expect(result.failed).toBe(false);
    for (const secret of mustGo) expect(result.content).not.toContain(secret);
    for (const text of row.kept) expect(result.content).toContain(text);
    expect(result.redactions).toBe(row.redactions);
    if (row.redactions === 0) expect(result.content).toBe(input);
    else expect(result.content).toContain("[MASKED_");

    if (row.sameLines) {
      const before = input.split("\n");
      const after = result.content.split("\n");
      expect(after).toHaveLength(before.length);
      after.forEach((line, i) => {
        if (line !== before[i]) expect(line).toContain("[MASKED_");
      });
    }
    if (row.parses) {
      const parsed =
        row.parses === "json"
          ? [JSON.parse(result.content)]
          : parseAllDocuments(result.content).map((d) => d.toJS());
      const masked = parsed.flatMap((doc) => secretValues(JSON.stringify(doc)));
      expect(masked.length).toBeGreaterThan(0);
      for (const value of masked) expect(value).toBe("[MASKED_SECRET_DATA]");
    }
  });

  it("leaves a ConfigMap byte-for-byte identical, also inside a List next to Secrets", () => {
    const list = service.maskToolResult(fixture("list-mixed.json"), KUBERNETES_SERVER).content;
    const configMap = (JSON.parse(list) as { items: { kind: string; data: unknown }[] }).items.find(
      (item) => item.kind === "ConfigMap",
    );
    expect(configMap?.data).toEqual({
      LOG_LEVEL: "debug",
      PAYMENT_PROVIDER: "stripe",
      RETRY_BACKOFF: "250ms",
      "application.properties":
        "server.port=8080\nspring.datasource.url=jdbc:postgresql://payments-db:5432/payments\nfeature.refunds=true\n",
    });
  });
});

describe("masking alert data (security group)", () => {
  const service = createMaskingService();

  it.each([
    { fixture: "pod-logs.txt", redactions: 4 },
    { fixture: "aws-credentials.txt", redactions: 2 },
    { fixture: "pem.txt", redactions: 2 },
  ])(
    "$fixture: planted secrets are masked before the alert is stored",
    ({ fixture: name, redactions }) => {
      const input = fixture(name);
      const mustGo = plantedForms(input);
      expect(mustGo.length).toBeGreaterThan(0);
      const result = service.maskAlertData(input, { enabled: true, pattern_group: "security" });
      for (const secret of mustGo) expect(result.content).not.toContain(secret);
      expect(result.redactions).toBe(redactions);
      expect(result.failed).toBe(false);
    },
  );
});
