/**
 * Every overlay of deploy/kubernetes, rendered offline (support/kustomize.ts) and checked
 * against the vendored Kubernetes and KEDA schemas, then against the invariants operators
 * rely on: probes, non-root, resources, graceful termination, disruption budgets, autoscaling
 * bound to the right stream and consumer, NATS replication, secrets, network reachability,
 * Prometheus scraping.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { CONSUMERS, STREAMS } from "@tarsy/contracts";
import { MetricsEnvShape } from "@tarsy/metrics";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { validators } from "./schemas/generated/kubernetes-validators.js";
import {
  admitsIngress,
  byKind,
  type Container,
  containerPort,
  effectiveEnv,
  find,
  podAnnotations,
  podLabels,
  podSpec,
  probeBudget,
  probeEndpoint,
  quantity,
  selects,
  type TrafficSource,
  workloads,
} from "./support/k8s.ts";
import { type K8sObject, renderKustomization } from "./support/kustomize.ts";
import { run } from "./support/processes.ts";
import { ROOT } from "./support/yaml.ts";

const KUSTOMIZE = resolve(ROOT, "deploy/kubernetes");
const OVERLAYS = ["base", "overlays/dev", "overlays/production"] as const;
const rendered = Object.fromEntries(
  OVERLAYS.map((o) => [o, renderKustomization(resolve(KUSTOMIZE, o))]),
) as Record<(typeof OVERLAYS)[number], K8sObject[]>;

/** TARSy's own processes: Deployment name → source folder (for env.ts). */
const SERVICES = {
  "ingest-api": "services/ingest-api",
  orchestrator: "services/orchestrator",
  "agent-runner": "services/agent-runner",
  "mcp-gateway": "services/mcp-gateway",
  "stream-relay": "services/stream-relay",
  "llm-service": "llm-service",
} as const;
type Service = keyof typeof SERVICES;
/**
 * The ops server (docs/operations.md "What runs"): GET /metrics, /health (liveness: 200
 * while the process runs) and /ready (readiness: its dependencies) on METRICS_PORT, 9464 by
 * default, in every service without a public port and in llm-service.
 */
const OPS = { variable: "METRICS_PORT", port: 9464, live: "/health", ready: "/ready" } as const;
const OPS_SERVICES = ["orchestrator", "agent-runner", "mcp-gateway", "llm-service"] as const;
/** The variable of the port each service serves GET /metrics on. */
const METRICS_PORT_VARIABLE: Record<Service, string> = {
  "ingest-api": "PORT",
  "stream-relay": "RELAY_PORT",
  orchestrator: OPS.variable,
  "agent-runner": OPS.variable,
  "mcp-gateway": OPS.variable,
  "llm-service": OPS.variable,
};
/** Services whose first start can be slow (MCP servers, NATS/Postgres/migrations): startup probes. */
const SLOW_STARTERS: Service[] = ["orchestrator", "agent-runner", "mcp-gateway"];
/** Probe paths that ask dependencies: fine for readiness, never for liveness or startup. */
const DEPENDENCY_PATHS: Record<string, string[]> = {
  "ingest-api": ["/health"],
  "stream-relay": ["/ready"],
  ...Object.fromEntries(OPS_SERVICES.map((s) => [s, [OPS.ready]])),
};
/** Prometheus, in the namespace the NetworkPolicies trust for monitoring. */
const PROMETHEUS: TrafficSource = {
  namespace: "monitoring",
  namespaceLabels: { "kubernetes.io/metadata.name": "monitoring" },
  podLabels: { "app.kubernetes.io/name": "prometheus" },
};
/** Any other pod of the cluster. */
const STRANGER: TrafficSource = {
  namespace: "default",
  namespaceLabels: { "kubernetes.io/metadata.name": "default" },
  podLabels: { app: "anything" },
};
/** Secrets an operator creates (docs/operations.md); everything else must be rendered. */
const EXTERNAL_SECRETS = [
  "tarsy-database",
  "tarsy-llm-api-keys",
  "tarsy-nats",
  "tarsy-oauth2-proxy",
];

const containersOf = (obj: K8sObject): Container[] => {
  const spec = podSpec(obj);
  return [...spec.containers, ...(spec.initContainers ?? [])];
};
const envSource = (service: Service) =>
  readFileSync(resolve(ROOT, SERVICES[service], "src/env.ts"), "utf8");
/** The default env.ts gives a variable, when it spells one (shared env shapes do not). */
const envDefault = (service: Service, variable: string) => {
  const match = new RegExp(`^\\s+${variable}: z[^\\n]*\\.default\\(([0-9_]+)\\)`, "m").exec(
    envSource(service),
  );
  return match?.[1] ? Number(match[1].replaceAll("_", "")) : undefined;
};
const serviceContainer = (objects: K8sObject[], service: Service) =>
  podSpec(find(objects, "Deployment", service)).containers[0] as Container;
const natsConf = (objects: K8sObject[]) =>
  (find(objects, "ConfigMap", "nats-config").data as Record<string, string>)["nats.conf"] ?? "";

describe.each(OVERLAYS)("deploy/kubernetes/%s", (overlay) => {
  const objects = rendered[overlay];

  it("validates every object against the Kubernetes and KEDA schemas", () => {
    const failures = objects.flatMap((obj) => {
      const validate = validators[`${obj.apiVersion}/${obj.kind}`];
      if (!validate) return [`${obj.apiVersion}/${obj.kind}: no vendored schema`];
      if (validate(obj)) return [];
      return (validate.errors ?? []).map(
        (e) =>
          `${obj.kind}/${obj.metadata.name}${e.instancePath}: ${e.keyword} ${JSON.stringify(e.params)}`,
      );
    });
    expect(failures).toEqual([]);
    expect(objects.length).toBeGreaterThan(30);
  });

  it("names every object once per kind and labels it part-of tarsy", () => {
    const ids = objects.map((o) => `${o.kind}/${o.metadata.name}`);
    expect(new Set(ids).size).toBe(ids.length);
    for (const obj of objects) {
      expect(obj.metadata.labels?.["app.kubernetes.io/part-of"], obj.metadata.name).toBe("tarsy");
    }
  });

  it("runs every container as a non-root user without privileges, with requests and limits", () => {
    for (const obj of workloads(objects)) {
      const spec = podSpec(obj);
      expect(spec.securityContext?.runAsNonRoot, obj.metadata.name).toBe(true);
      expect(spec.securityContext?.runAsUser, obj.metadata.name).toBeGreaterThan(0);
      for (const c of containersOf(obj)) {
        const where = `${obj.metadata.name}/${c.name}`;
        expect(c.securityContext?.allowPrivilegeEscalation, where).toBe(false);
        expect(c.securityContext?.readOnlyRootFilesystem, where).toBe(true);
        expect(c.securityContext?.capabilities?.drop, where).toContain("ALL");
        for (const resource of ["cpu", "memory"]) {
          const request = c.resources?.requests?.[resource];
          const limit = c.resources?.limits?.[resource];
          expect(request, `${where} requests.${resource}`).toBeDefined();
          expect(limit, `${where} limits.${resource}`).toBeDefined();
          expect(quantity(limit ?? 0), where).toBeGreaterThanOrEqual(quantity(request ?? 0));
        }
        // A read-only root needs a writable /tmp: tsx caches compiled sources there.
        if (obj.metadata.name in SERVICES) {
          expect(
            c.volumeMounts?.map((m) => m.mountPath),
            where,
          ).toContain("/tmp");
        }
      }
    }
  });

  it("probes every container's readiness, and its liveness on another endpoint that asks no dependency", () => {
    for (const obj of [...byKind(objects, "Deployment"), ...byKind(objects, "StatefulSet")]) {
      const name = obj.metadata.name;
      for (const c of podSpec(obj).containers) {
        const where = `${name}/${c.name}`;
        expect(c.readinessProbe, `${where} readiness`).toBeDefined();
        expect(c.livenessProbe, `${where} liveness`).toBeDefined();
        // Restarting does not fix what readiness reports (a dependency down).
        expect(probeEndpoint(c, c.livenessProbe), where).not.toBe(
          probeEndpoint(c, c.readinessProbe),
        );
        // A busy process (a long LLM call, a GC pause) is not restarted within 30 s.
        expect(probeBudget(c.livenessProbe), where).toBeGreaterThanOrEqual(30);
        for (const probe of [c.livenessProbe, c.startupProbe]) {
          const path = probe?.httpGet?.path?.split("?")[0];
          if (path) expect(DEPENDENCY_PATHS[name] ?? [], where).not.toContain(path);
        }
        for (const probe of [c.readinessProbe, c.livenessProbe, c.startupProbe]) {
          const port = probe?.httpGet?.port ?? probe?.grpc?.port ?? probe?.tcpSocket?.port;
          if (port === undefined) continue;
          expect(containerPort(c, port), `${where} probes undeclared port ${port}`).toBeDefined();
        }
      }
    }
    // ingest-api is ready only when its dependencies are (GET /health checks them all).
    expect(serviceContainer(objects, "ingest-api").readinessProbe?.httpGet?.path).toBe("/health");
    expect(serviceContainer(objects, "stream-relay").readinessProbe?.httpGet?.path).toBe("/ready");
  });

  it.each(OPS_SERVICES)("runs %s's ops server on its metrics port, probed there", (service) => {
    const c = serviceContainer(objects, service);
    const env = effectiveEnv(c, objects);
    // The port named "metrics" is the one the process listens on, the contract's default.
    const metrics = containerPort(c, "metrics");
    expect(metrics, `${service} declares a port named metrics`).toBe(OPS.port);
    expect(Number(env[OPS.variable] ?? OPS.port)).toBe(metrics);
    // Its env.ts spells the default, or takes the shared ops-server shape (@tarsy/metrics).
    const declared =
      envDefault(service, OPS.variable) ??
      (envSource(service).includes("...MetricsEnvShape")
        ? z.object(MetricsEnvShape).parse({}).METRICS_PORT
        : undefined);
    expect(declared, `${service} env.ts default of ${OPS.variable}`).toBe(OPS.port);
    // Liveness: the ops server's /health.
    expect(probeEndpoint(c, c.livenessProbe)).toBe(`http :${OPS.port}${OPS.live}`);
    // Readiness: /ready, except llm-service, ready when its gRPC server is SERVING.
    if (service === "llm-service") {
      expect(c.readinessProbe?.grpc?.port).toBe(Number(env.LLM_SERVICE_PORT));
      expect(containerPort(c, c.readinessProbe?.grpc?.port)).toBeDefined();
    } else {
      expect(probeEndpoint(c, c.readinessProbe)).toBe(`http :${OPS.port}${OPS.ready}`);
    }
    // A slow first start is covered by a startup probe, so liveness does not cut it short.
    if (SLOW_STARTERS.includes(service)) {
      expect(probeEndpoint(c, c.startupProbe), `${service} startup`).toBe(
        `http :${OPS.port}${OPS.live}`,
      );
      expect(probeBudget(c.startupProbe), service).toBeGreaterThanOrEqual(120);
    }
    if (service === "mcp-gateway") {
      const initMs = Number(env.MCP_INIT_TIMEOUT_MS ?? 30_000);
      expect(probeBudget(c.startupProbe) * 1000).toBeGreaterThan(2 * initMs);
    }
    // The annotation that used to excuse services without a port is gone.
    expect(find(objects, "Deployment", service).metadata.annotations?.["tarsy.dev/probes"]).toBe(
      undefined,
    );
  });

  it("annotates every service's pods for Prometheus with the port that serves /metrics", () => {
    for (const obj of workloads(objects)) {
      const annotations = podAnnotations(obj);
      if (annotations["prometheus.io/scrape"] === undefined) continue;
      // A scrape annotation names a port some container declares, and a path.
      const port = Number(annotations["prometheus.io/port"]);
      const declared = podSpec(obj).containers.some((c) => containerPort(c, port) !== undefined);
      expect(declared, `${obj.metadata.name} scrapes undeclared port ${port}`).toBe(true);
      expect(annotations["prometheus.io/path"], obj.metadata.name).toMatch(/^\//);
    }
    for (const service of Object.keys(SERVICES) as Service[]) {
      const obj = find(objects, "Deployment", service);
      const annotations = podAnnotations(obj);
      const env = effectiveEnv(serviceContainer(objects, service), objects);
      const variable = METRICS_PORT_VARIABLE[service];
      const port = Number(env[variable] ?? (variable === OPS.variable ? OPS.port : Number.NaN));
      expect(annotations, service).toMatchObject({
        "prometheus.io/scrape": "true",
        "prometheus.io/port": String(port),
        "prometheus.io/path": "/metrics",
      });
    }
  });

  it("admits Prometheus from namespace monitoring to every metrics port, nobody else to the ops ports", () => {
    for (const service of Object.keys(SERVICES) as Service[]) {
      const obj = find(objects, "Deployment", service);
      const port = Number(podAnnotations(obj)["prometheus.io/port"]);
      expect(admitsIngress(objects, obj, PROMETHEUS, port), `monitoring → ${service}:${port}`).toBe(
        true,
      );
    }
    for (const service of OPS_SERVICES) {
      const obj = find(objects, "Deployment", service);
      expect(admitsIngress(objects, obj, STRANGER, OPS.port), `default → ${service}`).toBe(false);
      // Prometheus gets the ops port, not the rest (llm-service's gRPC is for its clients).
      for (const c of podSpec(obj).containers) {
        for (const p of c.ports ?? []) {
          if (p.containerPort === OPS.port) continue;
          expect(admitsIngress(objects, obj, PROMETHEUS, p.containerPort), service).toBe(false);
        }
      }
    }
  });

  it("gives every service time to hand in-flight work back before it is killed", () => {
    for (const name of Object.keys(SERVICES)) {
      const spec = podSpec(find(objects, "Deployment", name));
      const container = spec.containers[0] as Container;
      const env = effectiveEnv(container, objects);
      const shutdownMs = Number(env.SHUTDOWN_TIMEOUT_MS ?? 30_000);
      const preStop = container.lifecycle?.preStop?.exec?.command;
      const preStopMs = preStop?.[0] === "sleep" ? Number(preStop[1]) * 1000 : 0;
      const graceMs = (spec.terminationGracePeriodSeconds ?? 30) * 1000;
      expect(graceMs, name).toBeGreaterThanOrEqual(shutdownMs + preStopMs + 5_000);
    }
    const runner = podSpec(find(objects, "Deployment", "agent-runner")).containers[0] as Container;
    const env = effectiveEnv(runner, objects);
    // Executions run on for the grace, then are handed back before the shutdown deadline.
    expect(Number(env.RUNNER_SHUTDOWN_GRACE_MS)).toBeLessThan(
      Number(env.SHUTDOWN_TIMEOUT_MS) - 5_000,
    );
    // The gateway lets a tool call in flight finish.
    const gateway = podSpec(find(objects, "Deployment", "mcp-gateway")).containers[0] as Container;
    const gwEnv = effectiveEnv(gateway, objects);
    expect(Number(gwEnv.SHUTDOWN_TIMEOUT_MS)).toBeGreaterThan(Number(gwEnv.MCP_CALL_TIMEOUT_MS));
  });

  it("starts every TARSy container with an environment its own env schema accepts", async () => {
    for (const [name, folder] of Object.entries(SERVICES)) {
      const { EnvSchema } = (await import(resolve(ROOT, folder, "src/env.ts"))) as {
        EnvSchema: { safeParse(v: unknown): { success: boolean; error?: unknown } };
      };
      const container = podSpec(find(objects, "Deployment", name)).containers[0] as Container;
      const result = EnvSchema.safeParse(effectiveEnv(container, objects));
      expect(result.success, `${name}: ${String(result.error)}`).toBe(true);
    }
  });

  it("lets the runners balance over every llm-service pod (headless Service, dns:/// target)", () => {
    const service = find(objects, "Service", "llm-service");
    expect((service.spec as { clusterIP?: string }).clusterIP).toBe("None");
    const runner = podSpec(find(objects, "Deployment", "agent-runner")).containers[0] as Container;
    const port = (service.spec as { ports: { port: number }[] }).ports[0]?.port;
    expect(effectiveEnv(runner, objects).LLM_SERVICE_ADDRESS).toBe(`dns:///llm-service:${port}`);
  });

  it("covers every Deployment and StatefulSet by exactly one PodDisruptionBudget that allows a drain", () => {
    const pdbs = byKind(objects, "PodDisruptionBudget");
    const targets = [...byKind(objects, "Deployment"), ...byKind(objects, "StatefulSet")];
    for (const pdb of pdbs) {
      const spec = pdb.spec as { selector: object; maxUnavailable?: number; minAvailable?: number };
      const matched = targets.filter((w) => selects(spec.selector, podLabels(w)));
      expect(
        matched.map((w) => w.metadata.name),
        `PDB ${pdb.metadata.name}`,
      ).toHaveLength(1);
      // maxUnavailable keeps a single replica drainable; minAvailable could block a node.
      expect(spec.maxUnavailable, pdb.metadata.name).toBeGreaterThanOrEqual(1);
      expect(spec.minAvailable, pdb.metadata.name).toBeUndefined();
    }
    for (const w of targets) {
      const covering = pdbs.filter((p) =>
        selects((p.spec as { selector: object }).selector, podLabels(w)),
      );
      expect(covering, w.metadata.name).toHaveLength(1);
    }
  });

  it("autoscales ingest-api and stream-relay on CPU and the runners on their JetStream backlog", () => {
    for (const name of ["ingest-api", "stream-relay"]) {
      const hpa = find(objects, "HorizontalPodAutoscaler", name).spec as {
        scaleTargetRef: { kind: string; name: string };
        minReplicas: number;
        maxReplicas: number;
      };
      expect(hpa.scaleTargetRef).toMatchObject({ kind: "Deployment", name });
      find(objects, "Deployment", name);
      expect(hpa.minReplicas).toBeGreaterThanOrEqual(1);
      expect(hpa.maxReplicas).toBeGreaterThan(hpa.minReplicas);
    }

    const scaled = find(objects, "ScaledObject", "agent-runner").spec as {
      scaleTargetRef: { name: string };
      minReplicaCount: number;
      triggers: { type: string; metadata: Record<string, string> }[];
    };
    expect(scaled.scaleTargetRef.name).toBe("agent-runner");
    expect(scaled.minReplicaCount).toBeGreaterThanOrEqual(1);
    const runner = find(objects, "Deployment", "agent-runner");
    const env = effectiveEnv(podSpec(runner).containers[0] as Container, objects);
    expect(scaled.triggers).toHaveLength(1);
    const trigger = scaled.triggers[0];
    expect(trigger?.type).toBe("nats-jetstream");
    // The stream the runners' consumer reads, with the deployment's suffix, and its durable.
    expect(trigger?.metadata.stream).toBe(`${STREAMS.work.name}${env.TARSY_STREAM_SUFFIX ?? ""}`);
    expect(trigger?.metadata.consumer).toBe(CONSUMERS.runner.durable);
    expect(CONSUMERS.runner.filterSubject).toBe("work.runner.>");
    // One replica absorbs as many waiting executions as it has slots.
    expect(trigger?.metadata.lagThreshold).toBe(env.RUNNER_CONCURRENCY);
    // KEDA reaches the consumer's leader as <server_name>.<endpoint>: the headless Service of
    // this namespace, whose pods are named like the servers.
    const namespace = runner.metadata.namespace;
    const headless = find(objects, "Service", "nats-headless");
    const sts = find(objects, "StatefulSet", "nats");
    expect((sts.spec as { serviceName: string }).serviceName).toBe("nats-headless");
    expect((headless.spec as { clusterIP: string }).clusterIP).toBe("None");
    expect(trigger?.metadata.natsServerMonitoringEndpoint).toBe(
      namespace ? `nats-headless.${namespace}.svc.cluster.local:8222` : expect.any(String),
    );
    expect(natsConf(objects)).toMatch(/^server_name: \$POD_NAME$/m);
    const natsEnv = podSpec(sts).containers[0]?.env ?? [];
    expect(natsEnv.find((e) => e.name === "POD_NAME")?.valueFrom?.fieldRef?.fieldPath).toBe(
      "metadata.name",
    );
    expect(trigger?.metadata.account).toBe("$G");
  });

  it("replicates streams no more than the NATS servers allow, routing every server", () => {
    const sts = find(objects, "StatefulSet", "nats");
    const servers = (sts.spec as { replicas: number }).replicas;
    const conf = natsConf(objects);
    const routes = [...conf.matchAll(/nats:\/\/(nats-\d+)\.nats-headless:6222/g)].map((m) => m[1]);
    if (servers > 1) {
      expect(routes).toEqual(Array.from({ length: servers }, (_, i) => `nats-${i}`));
    } else {
      expect(conf).not.toMatch(/cluster\s*{/);
    }
    expect(conf).toMatch(/jetstream\s*{/);
    for (const name of Object.keys(SERVICES)) {
      if (name === "llm-service") continue;
      const env = effectiveEnv(
        podSpec(find(objects, "Deployment", name)).containers[0] as Container,
        objects,
      );
      expect(Number(env.TARSY_STREAM_REPLICAS), name).toBeLessThanOrEqual(servers);
      expect(env.NATS_URL, name).toBe("nats://nats:4222");
    }
  });

  it("reads config from the ConfigMap and every secret from a Secret it names", () => {
    const rendered = new Set(objects.map((o) => `${o.kind}/${o.metadata.name}`));
    const docs = readFileSync(resolve(ROOT, "docs/operations.md"), "utf8");
    for (const obj of workloads(objects)) {
      const spec = podSpec(obj);
      for (const v of spec.volumes ?? []) {
        if (v.configMap) expect(rendered.has(`ConfigMap/${v.configMap.name}`), v.name).toBe(true);
      }
      for (const c of containersOf(obj)) {
        for (const from of c.envFrom ?? []) {
          if (from.configMapRef)
            expect(rendered.has(`ConfigMap/${from.configMapRef.name}`)).toBe(true);
          if (from.secretRef && !rendered.has(`Secret/${from.secretRef.name}`)) {
            expect(EXTERNAL_SECRETS).toContain(from.secretRef.name);
          }
        }
        for (const v of c.env ?? []) {
          if (v.value !== undefined) {
            expect(v.name, `${obj.metadata.name}: a secret as a literal`).not.toMatch(
              /(KEY|TOKEN|PASSWORD|SECRET)$/,
            );
          }
          const ref = v.valueFrom?.secretKeyRef;
          if (ref && !rendered.has(`Secret/${ref.name}`)) {
            expect(EXTERNAL_SECRETS, `${obj.metadata.name} ${v.name}`).toContain(ref.name);
            // An operator learns from the runbook which Secret and key to create.
            expect(docs).toContain(ref.name);
            expect(docs).toContain(ref.key);
          }
        }
      }
    }
    // Provider keys reach llm-service only.
    for (const obj of workloads(objects)) {
      const usesKeys = containersOf(obj).some((c) =>
        (c.envFrom ?? []).some((f) => f.secretRef?.name === "tarsy-llm-api-keys"),
      );
      expect(usesKeys, obj.metadata.name).toBe(obj.metadata.name === "llm-service");
    }
    // Postgres is external: reached through DATABASE_URL from the Secret tarsy-database.
    for (const name of ["ingest-api", "orchestrator", "agent-runner"]) {
      const c = podSpec(find(objects, "Deployment", name)).containers[0] as Container;
      const db = c.env?.find((e) => e.name === "DATABASE_URL");
      expect(db?.valueFrom?.secretKeyRef, name).toMatchObject({
        name: "tarsy-database",
        key: "DATABASE_URL",
      });
    }
  });

  it("runs migrations as a Job from the migrate image, with the database Secret", () => {
    const job = find(objects, "Job", "tarsy-migrate");
    const c = podSpec(job).containers[0] as Container;
    expect(c.image).toMatch(/(^|\/)migrate(:|$)/);
    expect(c.env?.find((e) => e.name === "DATABASE_URL")?.valueFrom?.secretKeyRef?.name).toBe(
      "tarsy-database",
    );
    expect((podSpec(job) as { restartPolicy?: string }).restartPolicy).toBe("Never");
  });

  it("lets traffic reach every Service port through the default-deny NetworkPolicies", () => {
    const policies = byKind(objects, "NetworkPolicy");
    const denyAll = policies.find(
      (p) => JSON.stringify((p.spec as { podSelector: object }).podSelector) === "{}",
    );
    expect(denyAll, "a default-deny ingress policy").toBeDefined();
    for (const svc of byKind(objects, "Service")) {
      const spec = svc.spec as {
        selector: Record<string, string>;
        ports: { port: number; targetPort: string | number }[];
      };
      const target = workloads(objects).find((w) =>
        selects({ matchLabels: spec.selector }, podLabels(w)),
      );
      expect(target, `Service ${svc.metadata.name} selects a workload`).toBeDefined();
      if (!target) continue;
      const containerPorts = podSpec(target).containers.flatMap((c) => c.ports ?? []);
      for (const port of spec.ports) {
        const cp = containerPorts.find(
          (p) => p.name === port.targetPort || p.containerPort === port.targetPort,
        );
        expect(cp, `${svc.metadata.name}:${port.port} targets a container port`).toBeDefined();
        const allowed = policies.some((p) => {
          const ps = p.spec as {
            podSelector: object;
            ingress?: { ports?: { port: number }[] }[];
          };
          return (
            selects(ps.podSelector, podLabels(target)) &&
            (ps.ingress ?? []).some((rule) =>
              (rule.ports ?? []).some((rp) => rp.port === cp?.containerPort),
            )
          );
        });
        expect(allowed, `ingress to ${svc.metadata.name}:${cp?.containerPort}`).toBe(true);
      }
    }
  });
});

describe("the cluster configuration", () => {
  it("passes `tarsy config check` as mounted from the ConfigMap", async () => {
    const data = find(rendered["overlays/production"], "ConfigMap", "tarsy-config").data as Record<
      string,
      string
    >;
    expect(Object.keys(data).sort()).toEqual(["llm-providers.yaml", "tarsy.yaml"]);
    const dir = mkdtempSync(join(tmpdir(), "tarsy-config-"));
    try {
      for (const [name, text] of Object.entries(data)) writeFileSync(join(dir, name), text);
      const result = await run(
        "node",
        [resolve(ROOT, "packages/cli/bin/tarsy.mjs"), "config", "check", "--config-dir", dir],
        { env: { PATH: process.env.PATH, GOOGLE_API_KEY: "set-in-the-secret" } },
      );
      expect(result.output).toContain("Configuration is valid.");
      expect(result.code).toBe(0);
      // The in-cluster MCP server is the binary the mcp-gateway image installs.
      expect(result.output).toMatch(
        /kubernetes-server \[overrides built-in\]: stdio: kubernetes-mcp-server /,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("overlay specifics", () => {
  it("production replicates every stream 3 times on a 3-node cluster with authenticated clients", () => {
    const objects = rendered["overlays/production"];
    expect((find(objects, "StatefulSet", "nats").spec as { replicas: number }).replicas).toBe(3);
    const env = find(objects, "ConfigMap", "tarsy-env").data as Record<string, string>;
    expect(env.TARSY_STREAM_REPLICAS).toBe("3");
    const auth = (find(objects, "ConfigMap", "nats-config").data as Record<string, string>)[
      "auth.conf"
    ];
    expect(auth).toMatch(/authorization\s*{\s*token: \$NATS_TOKEN\s*}/);
    // Every NATS client and server reads the same token.
    for (const obj of [...byKind(objects, "Deployment"), ...byKind(objects, "StatefulSet")]) {
      if (obj.metadata.name === "llm-service" || obj.metadata.name === "oauth2-proxy") continue;
      const token = podSpec(obj).containers[0]?.env?.find((e) => e.name === "NATS_TOKEN");
      expect(token?.valueFrom?.secretKeyRef, obj.metadata.name).toMatchObject({
        name: "tarsy-nats",
        key: "token",
      });
    }
  });

  it("production pins every image to a tag", () => {
    for (const obj of workloads(rendered["overlays/production"])) {
      for (const c of containersOf(obj)) {
        expect(c.image, obj.metadata.name).toMatch(/:[\w][\w.-]*$/);
        expect(c.image).not.toMatch(/:latest$/);
      }
    }
  });

  it("production puts oauth2-proxy in front: author headers passed, API reachable only through it", () => {
    const objects = rendered["overlays/production"];
    const proxy = podSpec(find(objects, "Deployment", "oauth2-proxy")).containers[0] as Container;
    expect(proxy.args).toContain("--pass-user-headers=true");
    const upstreams = (proxy.args ?? [])
      .filter((a) => a.startsWith("--upstream="))
      .map((a) => new URL(a.slice(11)));
    expect(upstreams.map((u) => `${u.hostname}:${u.port}${u.pathname}`)).toEqual([
      "ingest-api:8080/",
      "stream-relay:8081/api/v1/ws",
    ]);
    for (const u of upstreams) {
      const svc = find(objects, "Service", u.hostname).spec as { ports: { port: number }[] };
      expect(svc.ports.map((p) => p.port)).toContain(Number(u.port));
    }
    const ingress = find(objects, "Ingress", "tarsy").spec as {
      rules: { http: { paths: { backend: { service: { name: string } } }[] } }[];
    };
    expect(ingress.rules[0]?.http.paths[0]?.backend.service.name).toBe("oauth2-proxy");
    const sources = (name: string) =>
      (
        (find(objects, "NetworkPolicy", name).spec as { ingress: { from?: object[] }[] }).ingress ??
        []
      ).map((rule) => rule.from);
    // No rule without `from` (which would admit anyone and let X-Forwarded-User be forged).
    for (const name of ["ingest-api", "stream-relay"]) {
      for (const from of sources(name)) expect(from, name).toBeDefined();
    }
    expect(JSON.stringify(sources("stream-relay"))).toContain("oauth2-proxy");
    // Without the component (dev), the API is open to the ingress controller directly.
    expect(
      byKind(rendered["overlays/dev"], "Deployment").map((d) => d.metadata.name),
    ).not.toContain("oauth2-proxy");
  });

  it("dev runs one NATS server, so streams have one replica", () => {
    const objects = rendered["overlays/dev"];
    expect((find(objects, "StatefulSet", "nats").spec as { replicas: number }).replicas).toBe(1);
    expect(
      (find(objects, "ConfigMap", "tarsy-env").data as Record<string, string>)
        .TARSY_STREAM_REPLICAS,
    ).toBe("1");
    expect(find(objects, "ClusterRoleBinding", "tarsy-dev-mcp-gateway-view").subjects).toEqual([
      { kind: "ServiceAccount", name: "tarsy-mcp-gateway", namespace: "tarsy-dev" },
    ]);
  });
});
