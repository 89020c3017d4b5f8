/**
 * Masking throughput on ~1 MB of kubectl-like output, against a raw baseline of one
 * `String.prototype.replace` pass over the same text. Run: `npx tsx bench/masking.bench.ts`
 * (from packages/masking). Prints one line per case; numbers are medians of timed runs.
 */
import { stringify } from "yaml";
import {
  createMaskingService,
  maskKubernetesSecrets,
  type ServerMaskingConfig,
} from "../src/index.ts";

const TARGET_BYTES = 1024 * 1024;
const RUNS = 9;

const KUBERNETES_SERVER: ServerMaskingConfig = {
  enabled: true,
  pattern_groups: ["kubernetes"],
  patterns: ["certificate", "token", "email"],
  custom_patterns: [],
};

/** TARSy's original password pattern: one typical key/value regex, for scale. */
const TARSY_PASSWORD_REGEX = /(?:password|pwd|pass)["']?\s*[:=]\s*["']?([^"'\s\n]{6,})["']?/gi;

const b64 = (value: string) => Buffer.from(value).toString("base64");

function secret(i: number) {
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
          stringData: { password: `Pw-${i}-s3cr3t!`, "api-key": `sk_live_${i}abcdefghijklmnop` },
        })}\n`,
      },
    },
    data: {
      password: b64(`Pw-${i}-s3cr3t!`),
      "api-key": b64(`sk_live_${i}abcdefghijklmnop`),
      "database-url": b64(`postgres://app${i}:Pw-${i}-s3cr3t!@db-${i}:5432/app`),
    },
  };
}

function configMap(i: number) {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: `app-${i}-config`,
      namespace: `team-${i % 17}`,
      resourceVersion: String(200000 + i),
    },
    data: {
      LOG_LEVEL: "info",
      "application.properties": `server.port=${8000 + (i % 100)}\nfeature.refunds=true\nretry.backoff=250ms\n`,
    },
  };
}

function pod(i: number) {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: `api-${i}-7d9f8c6b5-x2k4z`,
      namespace: `team-${i % 17}`,
      labels: { app: `api-${i}` },
    },
    spec: {
      containers: [
        {
          name: "api",
          image: `registry.example.com/team/api:1.${i % 50}.0`,
          env: [
            { name: "LOG_LEVEL", value: "info" },
            { name: "DB_PASSWORD", value: `Pw-${i}-s3cr3t!` },
            { name: "DATABASE_URL", value: `postgres://app${i}:Pw-${i}-s3cr3t!@db-${i}:5432/app` },
          ],
          resources: { requests: { cpu: "100m", memory: "128Mi" } },
        },
      ],
    },
    status: { phase: "Running", podIP: `10.0.${i % 255}.${(i * 7) % 255}` },
  };
}

function buildList(make: (i: number) => object, format: "yaml" | "json"): string {
  const items: object[] = [];
  let size = 0;
  for (let i = 0; size < TARGET_BYTES; i++) {
    const item = make(i);
    items.push(item);
    size += JSON.stringify(item).length * (format === "json" ? 1.6 : 1.1);
  }
  const list = { apiVersion: "v1", kind: "List", items, metadata: { resourceVersion: "" } };
  return format === "json"
    ? `${JSON.stringify(list, null, 4)}\n`
    : stringify(list, { lineWidth: 0 });
}

function buildLogs(): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < TARGET_BYTES; i++) {
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

function time(run: () => unknown): number {
  run();
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    run();
    samples.push(performance.now() - start);
  }
  return median(samples);
}

const service = createMaskingService();
const cases: { name: string; text: string }[] = [
  {
    name: "Secrets+ConfigMaps List, YAML",
    text: buildList((i) => (i % 2 ? configMap(i) : secret(i)), "yaml"),
  },
  {
    name: "Secrets+ConfigMaps List, JSON",
    text: buildList((i) => (i % 2 ? configMap(i) : secret(i)), "json"),
  },
  { name: "Pods with env, YAML (no Secret)", text: buildList(pod, "yaml") },
  { name: "Pod logs, plain text", text: buildLogs() },
];

const rate = (bytes: number, ms: number) =>
  `${(bytes / 1024 / 1024 / (ms / 1000)).toFixed(1)} MB/s`;
const cell = (bytes: number, ms: number) => `${rate(bytes, ms)} (${ms.toFixed(1)} ms)`.padEnd(24);

console.log(`node ${process.version}, median of ${RUNS} runs, kubernetes-server masking config\n`);
console.log(
  [
    "case".padEnd(34),
    "size".padEnd(10),
    "baseline: 1 replace".padEnd(24),
    "baseline: 1 k/v regex".padEnd(24),
    "masking (all steps)".padEnd(24),
    "Secret masker only".padEnd(24),
    "redactions".padEnd(12),
    "vs 1 replace",
  ].join(""),
);
for (const { name, text } of cases) {
  const bytes = Buffer.byteLength(text);
  const baseline = time(() => text.replace(/AKIA[A-Z0-9]{16}/g, "[MASKED_AWS_KEY]"));
  const keyValue = time(() =>
    text.replace(TARSY_PASSWORD_REGEX, '"password": "[MASKED_PASSWORD]"'),
  );
  const total = time(() => service.maskToolResult(text, KUBERNETES_SERVER));
  const structural = time(() => maskKubernetesSecrets(text));
  const result = service.maskToolResult(text, KUBERNETES_SERVER);
  if (result.failed) throw new Error(`masking failed on ${name}`);
  console.log(
    [
      name.padEnd(34),
      `${(bytes / 1024).toFixed(0)} KiB`.padEnd(10),
      cell(bytes, baseline),
      cell(bytes, keyValue),
      cell(bytes, total),
      cell(bytes, structural),
      String(result.redactions).padEnd(12),
      `${(total / baseline).toFixed(0)}x slower`,
    ].join(""),
  );
}

const compileStart = performance.now();
const fresh = createMaskingService();
const created = performance.now() - compileStart;
const firstStart = performance.now();
fresh.maskToolResult("warm-up", KUBERNETES_SERVER);
const firstCall = performance.now() - firstStart;
console.log(
  `\ncreateMaskingService (compiles all built-ins): ${created.toFixed(2)} ms; first call of a new config: ${firstCall.toFixed(2)} ms`,
);
