import { type K8sObject, podTemplate } from "./kustomize.ts";

export interface Probe {
  httpGet?: { path?: string; port: number | string };
  grpc?: { port: number; service?: string };
  tcpSocket?: { port: number | string };
  exec?: { command: string[] };
  periodSeconds?: number;
  timeoutSeconds?: number;
  failureThreshold?: number;
}
export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    secretKeyRef?: { name: string; key: string; optional?: boolean };
    configMapKeyRef?: { name: string; key: string; optional?: boolean };
    fieldRef?: { fieldPath: string };
  };
}
export interface Container {
  name: string;
  image: string;
  args?: string[];
  ports?: { name?: string; containerPort: number }[];
  env?: EnvVar[];
  envFrom?: {
    configMapRef?: { name: string; optional?: boolean };
    secretRef?: { name: string; optional?: boolean };
  }[];
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
  resources?: {
    requests?: Record<string, string | number>;
    limits?: Record<string, string | number>;
  };
  securityContext?: {
    allowPrivilegeEscalation?: boolean;
    readOnlyRootFilesystem?: boolean;
    capabilities?: { drop?: string[] };
  };
  volumeMounts?: { name: string; mountPath: string }[];
}
export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  terminationGracePeriodSeconds?: number;
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
  volumes?: { name: string; configMap?: { name: string }; secret?: { secretName: string } }[];
}

export function byKind(objects: readonly K8sObject[], kind: string): K8sObject[] {
  return objects.filter((o) => o.kind === kind);
}

export function find(objects: readonly K8sObject[], kind: string, name: string): K8sObject {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind}/${name} in the rendered manifests`);
  return found;
}

export function podSpec(obj: K8sObject): PodSpec {
  const spec = podTemplate(obj)?.spec;
  if (!spec) throw new Error(`${obj.kind}/${obj.metadata.name} has no pod template`);
  return spec as PodSpec;
}

export function podLabels(obj: K8sObject): Record<string, string> {
  const meta = podTemplate(obj)?.metadata as { labels?: Record<string, string> } | undefined;
  return meta?.labels ?? {};
}

export function podAnnotations(obj: K8sObject): Record<string, string> {
  const meta = podTemplate(obj)?.metadata as { annotations?: Record<string, string> } | undefined;
  return meta?.annotations ?? {};
}

/** A container port by number or name, as its number (undefined when not declared). */
export function containerPort(c: Container, port: number | string | undefined): number | undefined {
  return c.ports?.find((p) => p.name === port || p.containerPort === port)?.containerPort;
}

/** What a probe asks, with named ports resolved: two probes with the same key ask the same. */
export function probeEndpoint(c: Container, probe: Probe | undefined): string | undefined {
  if (!probe) return undefined;
  if (probe.httpGet) {
    const port = containerPort(c, probe.httpGet.port) ?? probe.httpGet.port;
    return `http :${port}${probe.httpGet.path ?? "/"}`;
  }
  if (probe.grpc) return `grpc :${probe.grpc.port} ${probe.grpc.service ?? ""}`;
  if (probe.tcpSocket)
    return `tcp :${containerPort(c, probe.tcpSocket.port) ?? probe.tcpSocket.port}`;
  if (probe.exec) return `exec ${JSON.stringify(probe.exec.command)}`;
  throw new Error(`${c.name}: a probe of a kind not handled`);
}

/** Budget in seconds before a probe gives up (period × failureThreshold, with defaults). */
export function probeBudget(probe: Probe | undefined): number {
  return (probe?.periodSeconds ?? 10) * (probe?.failureThreshold ?? 3);
}

/** Who opens a connection, for NetworkPolicy evaluation. */
export interface TrafficSource {
  namespace: string;
  namespaceLabels: Record<string, string>;
  podLabels: Record<string, string>;
}

interface PolicyPeer {
  podSelector?: Parameters<typeof selects>[0];
  namespaceSelector?: Parameters<typeof selects>[0];
  ipBlock?: object;
}
interface PolicySpec {
  podSelector: Parameters<typeof selects>[0];
  policyTypes?: string[];
  ingress?: { from?: PolicyPeer[]; ports?: { port?: number | string; protocol?: string }[] }[];
}

/**
 * Whether the NetworkPolicies let `source` open a TCP connection to `port` of `target`'s
 * pods, as the NetworkPolicy API defines it: a pod no ingress policy selects admits
 * everything; otherwise some rule of a selecting policy must match both the peer (no
 * `from` = anyone; a podSelector alone = pods of the target's namespace; a
 * namespaceSelector, with or without a podSelector) and the port (no `ports` = every
 * port; named ports resolved on the target's containers). ipBlocks are never matched.
 */
export function admitsIngress(
  objects: readonly K8sObject[],
  target: K8sObject,
  source: TrafficSource,
  port: number,
): boolean {
  const labels = podLabels(target);
  const namespace = target.metadata.namespace ?? "default";
  const containers = podSpec(target).containers;
  const policies = objects
    .filter((o) => o.kind === "NetworkPolicy" && (o.metadata.namespace ?? "default") === namespace)
    .map((o) => o.spec as PolicySpec)
    .filter((p) => (p.policyTypes ?? ["Ingress"]).includes("Ingress"))
    .filter((p) => selects(p.podSelector, labels));
  if (policies.length === 0) return true;
  const peerMatches = (peer: PolicyPeer) => {
    if (peer.ipBlock) return false;
    const pods = peer.podSelector ? selects(peer.podSelector, source.podLabels) : true;
    if (peer.namespaceSelector)
      return selects(peer.namespaceSelector, source.namespaceLabels) && pods;
    return source.namespace === namespace && pods;
  };
  const portMatches = (p: { port?: number | string; protocol?: string }) =>
    (p.protocol ?? "TCP") === "TCP" &&
    (p.port === undefined ||
      (typeof p.port === "string"
        ? containers.some((c) => containerPort(c, p.port) === port)
        : p.port === port));
  return policies.some((p) =>
    (p.ingress ?? []).some(
      (rule) =>
        (rule.from === undefined || rule.from.length === 0 || rule.from.some(peerMatches)) &&
        (rule.ports === undefined || rule.ports.length === 0 || rule.ports.some(portMatches)),
    ),
  );
}

export const WORKLOAD_KINDS = ["Deployment", "StatefulSet", "Job"];
export function workloads(objects: readonly K8sObject[]): K8sObject[] {
  return objects.filter((o) => WORKLOAD_KINDS.includes(o.kind));
}

/** True when `labels` satisfies a LabelSelector (matchLabels and In expressions). */
export function selects(
  selector: {
    matchLabels?: Record<string, string>;
    matchExpressions?: { key: string; operator: string; values?: string[] }[];
  },
  labels: Record<string, string>,
): boolean {
  const byLabels = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  const byExpressions = (selector.matchExpressions ?? []).every((e) => {
    if (e.operator !== "In") throw new Error(`selector operator ${e.operator} not handled`);
    return e.values?.includes(labels[e.key] ?? "") ?? false;
  });
  return byLabels && byExpressions;
}

/**
 * The environment a container starts with, as far as the manifests decide it: envFrom
 * ConfigMaps resolved, literal values, and stand-ins for what only the cluster knows
 * (secrets, field refs) so env schemas can parse it.
 */
/** What a Secret's key holds, where its shape matters to the env schema. */
const SECRET_SAMPLES: Record<string, string> = {
  DATABASE_URL: "postgres://tarsy@postgres:5432/tarsy",
  TARSY_TOKEN_KEY: Buffer.alloc(32, 7).toString("base64"),
};

export function effectiveEnv(
  container: Container,
  objects: readonly K8sObject[],
  /** Also the variables of `optional` Secret keys, as when those Secrets exist. */
  withOptionalSecrets = false,
): Record<string, string> {
  const env: Record<string, string> = {};
  const configData = (name: string) =>
    (objects.find((o) => o.kind === "ConfigMap" && o.metadata.name === name)?.data ?? {}) as Record<
      string,
      string
    >;
  for (const from of container.envFrom ?? []) {
    if (from.configMapRef) Object.assign(env, configData(from.configMapRef.name));
  }
  for (const v of container.env ?? []) {
    if (v.value !== undefined) env[v.name] = v.value;
    else if (v.valueFrom?.configMapKeyRef) {
      const value = configData(v.valueFrom.configMapKeyRef.name)[v.valueFrom.configMapKeyRef.key];
      if (value !== undefined) env[v.name] = value;
    } else if (
      v.valueFrom?.secretKeyRef &&
      (withOptionalSecrets || !v.valueFrom.secretKeyRef.optional)
    ) {
      env[v.name] = SECRET_SAMPLES[v.name] ?? "secret";
    } else if (v.valueFrom?.fieldRef) env[v.name] = "pod-name-0";
  }
  return env;
}

const SUFFIX: Record<string, number> = {
  "": 1,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  Ki: 1024,
  Mi: 1024 ** 2,
  Gi: 1024 ** 3,
};
/** A Kubernetes quantity ("250m", "512Mi", "1") as a number. */
export function quantity(value: string | number): number {
  if (typeof value === "number") return value;
  const match = /^([0-9.]+)([a-zA-Z]*)$/.exec(value);
  const factor = match ? SUFFIX[match[2] ?? ""] : undefined;
  if (!match || factor === undefined) throw new Error(`quantity ${value} not handled`);
  return Number(match[1]) * factor;
}
