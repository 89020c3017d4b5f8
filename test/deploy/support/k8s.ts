import { type K8sObject, podTemplate } from "./kustomize.ts";

export interface Probe {
  httpGet?: { path?: string; port: number | string };
  grpc?: { port: number };
  tcpSocket?: { port: number | string };
  periodSeconds?: number;
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
export function effectiveEnv(
  container: Container,
  objects: readonly K8sObject[],
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
    } else if (v.valueFrom?.secretKeyRef && !v.valueFrom.secretKeyRef.optional) {
      env[v.name] = v.name === "DATABASE_URL" ? "postgres://tarsy@postgres:5432/tarsy" : "secret";
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
