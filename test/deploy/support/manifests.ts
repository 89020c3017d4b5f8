/**
 * deploy/kubernetes as the manifest tests see it: every overlay rendered offline
 * (support/kustomize.ts), TARSy's services and their ops ports, the traffic sources the
 * NetworkPolicies are checked against, and small readers of rendered objects.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe } from "vitest";
import { type Container, find, podSpec, type TrafficSource } from "./k8s.ts";
import { type K8sObject, renderKustomization } from "./kustomize.ts";
import { ROOT } from "./yaml.ts";

const KUSTOMIZE = resolve(ROOT, "deploy/kubernetes");
export const OVERLAYS = ["base", "overlays/dev", "overlays/production"] as const;
export const rendered = Object.fromEntries(
  OVERLAYS.map((o) => [o, renderKustomization(resolve(KUSTOMIZE, o))]),
) as Record<(typeof OVERLAYS)[number], K8sObject[]>;

/** TARSy's own processes: Deployment name → source folder (for env.ts). */
export const SERVICES = {
  "ingest-api": "services/ingest-api",
  orchestrator: "services/orchestrator",
  "agent-runner": "services/agent-runner",
  "mcp-gateway": "services/mcp-gateway",
  "stream-relay": "services/stream-relay",
  "llm-service": "llm-service",
  notifier: "services/notifier",
} as const;
export type Service = keyof typeof SERVICES;
/**
 * The ops server (docs/operations.md "What runs"): GET /metrics, /health (liveness: 200
 * while the process runs) and /ready (readiness: its dependencies) on METRICS_PORT, 9464 by
 * default, in every service without a public port and in llm-service.
 */
export const OPS = {
  variable: "METRICS_PORT",
  port: 9464,
  live: "/health",
  ready: "/ready",
} as const;
export const OPS_SERVICES = [
  "orchestrator",
  "agent-runner",
  "mcp-gateway",
  "llm-service",
  "notifier",
] as const;
/** The variable of the port each service serves GET /metrics on. */
export const METRICS_PORT_VARIABLE: Record<Service, string> = {
  "ingest-api": "PORT",
  "stream-relay": "RELAY_PORT",
  orchestrator: OPS.variable,
  "agent-runner": OPS.variable,
  "mcp-gateway": OPS.variable,
  "llm-service": OPS.variable,
  notifier: OPS.variable,
};
/** Services whose first start can be slow (MCP servers, NATS/Postgres/migrations): startup probes. */
export const SLOW_STARTERS: Service[] = ["orchestrator", "agent-runner", "mcp-gateway", "notifier"];
/** Probe paths that ask dependencies: fine for readiness, never for liveness or startup. */
export const DEPENDENCY_PATHS: Record<string, string[]> = {
  "ingest-api": ["/health"],
  "stream-relay": ["/ready"],
  ...Object.fromEntries(OPS_SERVICES.map((s) => [s, [OPS.ready]])),
};
/** Prometheus, in the namespace the NetworkPolicies trust for monitoring. */
export const PROMETHEUS: TrafficSource = {
  namespace: "monitoring",
  namespaceLabels: { "kubernetes.io/metadata.name": "monitoring" },
  podLabels: { "app.kubernetes.io/name": "prometheus" },
};
/** Any other pod of the cluster. */
export const STRANGER: TrafficSource = {
  namespace: "default",
  namespaceLabels: { "kubernetes.io/metadata.name": "default" },
  podLabels: { app: "anything" },
};
/** Secrets an operator creates (docs/operations.md); everything else must be rendered. */
export const EXTERNAL_SECRETS = [
  "tarsy-alertmanager",
  "tarsy-database",
  "tarsy-llm-api-keys",
  "tarsy-nats",
  "tarsy-notifications",
  "tarsy-oauth2-proxy",
  "tarsy-token-key",
];

export const containersOf = (obj: K8sObject): Container[] => {
  const spec = podSpec(obj);
  return [...spec.containers, ...(spec.initContainers ?? [])];
};
export const envSource = (service: Service) =>
  readFileSync(resolve(ROOT, SERVICES[service], "src/env.ts"), "utf8");
/** The default env.ts gives a variable, when it spells one (shared env shapes do not). */
export const envDefault = (service: Service, variable: string) => {
  const match = new RegExp(`^\\s+${variable}: z[^\\n]*\\.default\\(([0-9_]+)\\)`, "m").exec(
    envSource(service),
  );
  return match?.[1] ? Number(match[1].replaceAll("_", "")) : undefined;
};
export const serviceContainer = (objects: K8sObject[], service: Service) =>
  podSpec(find(objects, "Deployment", service)).containers[0] as Container;
export const natsConf = (objects: K8sObject[]) =>
  (find(objects, "ConfigMap", "nats-config").data as Record<string, string>)["nats.conf"] ?? "";

/** Declares the tests `body` defines once per overlay, each in a block `deploy/kubernetes/<overlay>`. */
export function forEachOverlay(body: (objects: K8sObject[]) => void): void {
  describe.each(OVERLAYS)("deploy/kubernetes/%s", (overlay) => body(rendered[overlay]));
}
