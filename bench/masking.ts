/**
 * Masking throughput with the reference default config (the kubernetes-server MCP server's:
 * group `kubernetes` + `certificate`, `token`, `email`), beside raw baselines measured in the
 * same run on the same input: the bare parse (the `yaml` parser for YAML, `JSON.parse` for
 * JSON) and one `String.prototype.replace` pass. The headline case is a 5 MB mixed manifest
 * (helm-template-like: Secrets with last-applied annotations, ConfigMaps, Deployments with
 * args and env, Services); the target is at least 10 MB/s.
 *
 * Run: `pnpm --filter @tarsy/bench masking`
 */
import { createMaskingService, type ServerMaskingConfig } from "@tarsy/masking";
import { parseAllDocuments, stringify } from "yaml";

const REFERENCE_DEFAULT: ServerMaskingConfig = {
  enabled: true,
  pattern_groups: ["kubernetes"],
  patterns: ["certificate", "token", "email"],
  custom_patterns: [],
};
const TARGET_MB_PER_S = 10;

const b64 = (value: string) => Buffer.from(value).toString("base64");

function secret(i: number) {
  const stringData = { password: `Pw-${i}-s3cr3t!`, "api-key": `sk_live_${i}abcdefghijklmnop` };
  return {
    apiVersion: "v1",
    kind: "Secret",
    type: "Opaque",
    metadata: {
      name: `app-${i}-credentials`,
      namespace: `team-${i % 17}`,
      resourceVersion: String(100000 + i),
      uid: `6f1c2d3e-4b5a-4c7d-9e8f-${String(i).padStart(12, "0")}`,
      annotations: {
        "kubectl.kubernetes.io/last-applied-configuration": `${JSON.stringify({
          apiVersion: "v1",
          kind: "Secret",
          metadata: { name: `app-${i}-credentials`, annotations: {} },
          stringData,
        })}\n`,
      },
    },
    data: {
      password: b64(stringData.password),
      "api-key": b64(stringData["api-key"]),
      "database-url": b64(`postgres://app${i}:Pw-${i}-s3cr3t!@db-${i}:5432/app`),
    },
  };
}

function configMap(i: number) {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: `app-${i}-config`, namespace: `team-${i % 17}` },
    data: {
      LOG_LEVEL: "info",
      "application.properties": `server.port=${8000 + (i % 100)}\nfeature.refunds=true\nretry.backoff=250ms\nspring.datasource.url=jdbc:postgresql://db-${i}:5432/app\n`,
    },
  };
}

function deployment(i: number) {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: `api-${i}`, namespace: `team-${i % 17}`, labels: { app: `api-${i}` } },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: `api-${i}` } },
      template: {
        metadata: { labels: { app: `api-${i}` } },
        spec: {
          serviceAccountName: `api-${i}`,
          containers: [
            {
              name: "api",
              image: `registry.example.com/team/api:1.${i % 50}.0`,
              args: ["--port=8080", "--token", `tkn_${i}_live_0123456789`, "--log-format=json"],
              env: [
                { name: "LOG_LEVEL", value: "info" },
                { name: "DB_PASSWORD", value: `Pw-${i}-s3cr3t!` },
                {
                  name: "SMTP_PASSWORD",
                  valueFrom: { secretKeyRef: { name: `app-${i}-credentials`, key: "smtp" } },
                },
              ],
              envFrom: [{ configMapRef: { name: `app-${i}-config` } }],
              ports: [{ containerPort: 8080, name: "http" }],
              resources: { requests: { cpu: "100m", memory: "128Mi" } },
            },
          ],
          volumes: [{ name: "tls", secret: { secretName: `api-${i}-tls` } }],
        },
      },
    },
  };
}

function service(i: number) {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: `api-${i}`, namespace: `team-${i % 17}` },
    spec: { selector: { app: `api-${i}` }, ports: [{ port: 80, targetPort: 8080 }] },
  };
}

const KINDS = [secret, configMap, deployment, service];

function mixedObjects(bytes: number): object[] {
  const objects: object[] = [];
  for (let i = 0, size = 0; size < bytes; i++) {
    const object = (KINDS[i % KINDS.length] as (i: number) => object)(i);
    objects.push(object);
    size += JSON.stringify(object).length * 1.1;
  }
  return objects;
}

const manifestYaml = (objects: object[]) =>
  objects.map((object) => stringify(object, { lineWidth: 0 })).join("---\n");
const listJson = (objects: object[]) =>
  `${JSON.stringify({ apiVersion: "v1", kind: "List", items: objects }, null, 4)}\n`;
const secretList = (bytes: number) =>
  stringify(
    {
      apiVersion: "v1",
      kind: "List",
      items: mixedObjects(bytes * 2)
        .filter((_, i) => i % 2 === 0)
        .map((_, i) => secret(i)),
    },
    { lineWidth: 0 },
  );

function logs(bytes: number): string {
  const lines: string[] = [];
  for (let i = 0, size = 0; size < bytes; i++) {
    const line =
      i % 25 === 0
        ? `2026-11-22T03:01:${String(i % 60).padStart(2, "0")}.118Z DEBUG connecting to postgres://app:Pw-${i}@db:5432/app`
        : `2026-11-22T03:01:${String(i % 60).padStart(2, "0")}.402Z INFO  request_id=${i.toString(16)} GET /api/v1/orders/${i} 200 ${i % 97}ms`;
    lines.push(line);
    size += line.length + 1;
  }
  return `${lines.join("\n")}\n`;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

function time(runs: number, run: () => unknown): number {
  run();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    run();
    samples.push(performance.now() - start);
  }
  return median(samples);
}

const MB = 1024 * 1024;
const rate = (bytes: number, ms: number) => bytes / MB / (ms / 1000);
const cell = (bytes: number, ms: number) =>
  `${rate(bytes, ms).toFixed(1)} MB/s (${ms.toFixed(0)} ms)`.padEnd(26);

const masking = createMaskingService();
const mixed = mixedObjects(5 * MB);
const cases: { name: string; text: string; parse: (text: string) => unknown; runs: number }[] = [
  {
    name: "mixed manifest, multi-doc YAML",
    text: manifestYaml(mixed),
    parse: (text) => parseAllDocuments(text),
    runs: 3,
  },
  {
    name: "mixed manifest, JSON List",
    text: listJson(mixed),
    parse: (text) => JSON.parse(text),
    runs: 5,
  },
  {
    name: "Secret-heavy List, YAML",
    text: secretList(MB),
    parse: (text) => parseAllDocuments(text),
    runs: 5,
  },
  { name: "pod logs, plain text", text: logs(MB), parse: (text) => text.split("\n"), runs: 9 },
];

console.log(
  `node ${process.version}; medians; config: reference default (kubernetes + certificate, token, email)\n`,
);
console.log(
  [
    "case".padEnd(32),
    "size".padEnd(10),
    "bare parse".padEnd(26),
    "1 replace".padEnd(26),
    "masking".padEnd(26),
    "redactions",
  ].join(""),
);
let headline = 0;
for (const { name, text, parse, runs } of cases) {
  const bytes = Buffer.byteLength(text);
  const parsed = time(runs, () => parse(text));
  const replaced = time(runs, () => text.replace(/AKIA[A-Z0-9]{16}/g, "[MASKED_AWS_KEY]"));
  const masked = time(runs, () => masking.maskToolResult(text, REFERENCE_DEFAULT));
  const result = masking.maskToolResult(text, REFERENCE_DEFAULT);
  if (result.failed) throw new Error(`masking failed on ${name}`);
  if (headline === 0) headline = rate(bytes, masked);
  console.log(
    [
      name.padEnd(32),
      `${(bytes / MB).toFixed(1)} MB`.padEnd(10),
      cell(bytes, parsed),
      cell(bytes, replaced),
      cell(bytes, masked),
      String(result.redactions),
    ].join(""),
  );
}
console.log(
  `\n5 MB mixed manifest (YAML): masking ${headline.toFixed(1)} MB/s; target ≥ ${TARGET_MB_PER_S} MB/s: ${headline >= TARGET_MB_PER_S ? "met" : "NOT met"}`,
);
