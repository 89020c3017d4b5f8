/**
 * A Kustomize renderer for the subset deploy/kubernetes uses (no kustomize or kubectl binary
 * runs here, and npm has no maintained JS implementation). Every field outside the subset is
 * rejected, so the renderer can never silently disagree with `kubectl kustomize`:
 *   resources (files, directories), components, namespace, labels (pairs, includeSelectors:
 *   false, includeTemplates), images (name, newName, newTag), replicas, patches (strategic
 *   merge by kind + name, or JSON 6902 with a target), configMapGenerator / secretGenerator
 *   (files, literals, behavior) with generatorOptions.disableNameSuffixHash: true.
 * Order: resources, generators, components, patches, replicas, images, labels, namespace.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { basename, relative, resolve, sep } from "node:path";
import { z } from "zod";
import { parseAllYaml } from "./yaml.ts";

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: unknown;
}

export class KustomizeError extends Error {
  readonly code = "kustomize_unsupported" as const;
}

const GeneratorSchema = z.strictObject({
  name: z.string().min(1),
  behavior: z.enum(["create", "merge", "replace"]).optional(),
  files: z.array(z.string()).optional(),
  literals: z.array(z.string()).optional(),
});

const KustomizationSchema = z.strictObject({
  apiVersion: z.enum(["kustomize.config.k8s.io/v1beta1", "kustomize.config.k8s.io/v1alpha1"]),
  kind: z.enum(["Kustomization", "Component"]),
  namespace: z.string().min(1).optional(),
  labels: z
    .array(
      z.strictObject({
        pairs: z.record(z.string(), z.string()),
        includeSelectors: z.literal(false).optional(),
        includeTemplates: z.boolean().optional(),
      }),
    )
    .optional(),
  resources: z.array(z.string()).optional(),
  components: z.array(z.string()).optional(),
  images: z
    .array(
      z.strictObject({
        name: z.string(),
        newName: z.string().optional(),
        newTag: z.string().optional(),
      }),
    )
    .optional(),
  replicas: z.array(z.strictObject({ name: z.string(), count: z.number().int() })).optional(),
  patches: z
    .array(
      z.strictObject({
        path: z.string().optional(),
        patch: z.string().optional(),
        target: z.strictObject({ kind: z.string(), name: z.string() }).optional(),
      }),
    )
    .optional(),
  generatorOptions: z.strictObject({ disableNameSuffixHash: z.literal(true) }).optional(),
  configMapGenerator: z.array(GeneratorSchema).optional(),
  secretGenerator: z.array(GeneratorSchema).optional(),
});
type Kustomization = z.infer<typeof KustomizationSchema>;

const CLUSTER_SCOPED = new Set(["ClusterRole", "ClusterRoleBinding", "Namespace"]);
const WORKLOADS = new Set(["Deployment", "StatefulSet", "Job", "DaemonSet"]);
/** Lists merged by a key in strategic merge patches (as Kubernetes' patchMergeKey). */
const MERGE_KEYS: Record<string, string> = {
  containers: "name",
  initContainers: "name",
  env: "name",
  volumes: "name",
  volumeMounts: "mountPath",
  imagePullSecrets: "name",
};

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const clone = <T>(v: T): T => structuredClone(v);

/** Renders the kustomization in `dir` (like `kubectl kustomize dir`). */
export function renderKustomization(dir: string): K8sObject[] {
  return build(resolve(dir), [], "Kustomization");
}

function build(dir: string, inherited: K8sObject[], expected: Kustomization["kind"]) {
  const file = resolve(dir, "kustomization.yaml");
  if (!existsSync(file)) throw new KustomizeError(`no kustomization.yaml in ${dir}`);
  const parsed = KustomizationSchema.safeParse(parseAllYaml(readFileSync(file, "utf8"), file)[0]);
  if (!parsed.success) throw new KustomizeError(`${file}: ${z.prettifyError(parsed.error)}`);
  const k = parsed.data;
  if (k.kind !== expected) throw new KustomizeError(`${file}: expected kind ${expected}`);

  const objects = [...inherited];
  for (const entry of k.resources ?? []) {
    const path = resolve(dir, entry);
    const found = statSync(path).isDirectory()
      ? build(path, [], "Kustomization")
      : loadObjects(path);
    for (const obj of found) add(objects, obj, file);
  }
  generate(dir, k, objects, file);
  let result = objects;
  for (const entry of k.components ?? []) result = build(resolve(dir, entry), result, "Component");
  for (const patch of k.patches ?? []) applyPatch(dir, patch, result, file);
  for (const { name, count } of k.replicas ?? []) {
    const target = result.find((o) => WORKLOADS.has(o.kind) && o.metadata.name === name);
    if (!target) throw new KustomizeError(`${file}: replicas: no workload ${name}`);
    (target.spec as Record<string, unknown>).replicas = count;
  }
  for (const image of k.images ?? []) setImages(result, image, file);
  for (const label of k.labels ?? []) {
    for (const obj of result) {
      obj.metadata.labels = { ...obj.metadata.labels, ...label.pairs };
      const template = podTemplate(obj);
      if (label.includeTemplates && template) {
        const meta = (template.metadata ?? {}) as { labels?: Record<string, string> };
        meta.labels = { ...meta.labels, ...label.pairs };
        template.metadata = meta;
      }
    }
  }
  if (k.namespace) setNamespace(result, k.namespace);
  return result;
}

function loadObjects(path: string): K8sObject[] {
  return parseAllYaml(readFileSync(path, "utf8"), path).map((doc) => {
    if (!isRecord(doc) || typeof doc.kind !== "string" || typeof doc.apiVersion !== "string") {
      throw new KustomizeError(`${path}: a document without apiVersion/kind`);
    }
    const meta = doc.metadata;
    if (!isRecord(meta) || typeof meta.name !== "string") {
      throw new KustomizeError(`${path}: ${doc.kind} without metadata.name`);
    }
    return doc as K8sObject;
  });
}

const idOf = (o: K8sObject) => `${o.kind}/${o.metadata.name}`;

function add(objects: K8sObject[], obj: K8sObject, file: string) {
  if (objects.some((o) => idOf(o) === idOf(obj))) {
    throw new KustomizeError(`${file}: ${idOf(obj)} defined twice`);
  }
  objects.push(obj);
}

/** A path inside the kustomization's directory (kustomize's load restrictor). */
function inside(dir: string, entry: string, file: string): string {
  const path = resolve(dir, entry);
  const rel = relative(dir, path);
  if (rel.startsWith("..") || rel.startsWith(sep)) {
    throw new KustomizeError(`${file}: ${entry} is outside ${dir}`);
  }
  return path;
}

function generate(dir: string, k: Kustomization, objects: K8sObject[], file: string) {
  const kinds = [
    ["ConfigMap", k.configMapGenerator ?? []],
    ["Secret", k.secretGenerator ?? []],
  ] as const;
  for (const [kind, generators] of kinds) {
    if (generators.length > 0 && !k.generatorOptions?.disableNameSuffixHash) {
      throw new KustomizeError(`${file}: name suffix hashes are not supported; disable them`);
    }
    for (const gen of generators) {
      const data: Record<string, string> = {};
      for (const entry of gen.files ?? []) {
        const [key, path] = entry.includes("=") ? entry.split("=", 2) : [basename(entry), entry];
        data[key as string] = readFileSync(inside(dir, path as string, file), "utf8");
      }
      for (const literal of gen.literals ?? []) {
        const at = literal.indexOf("=");
        if (at <= 0) throw new KustomizeError(`${file}: literal ${literal} is not KEY=VALUE`);
        data[literal.slice(0, at)] = literal.slice(at + 1);
      }
      const encoded =
        kind === "Secret"
          ? Object.fromEntries(
              Object.entries(data).map(([key, v]) => [key, Buffer.from(v).toString("base64")]),
            )
          : data;
      const existing = objects.find((o) => o.kind === kind && o.metadata.name === gen.name);
      const behavior = gen.behavior ?? "create";
      if (behavior === "create") {
        const obj: K8sObject = {
          apiVersion: "v1",
          kind,
          metadata: { name: gen.name },
          ...(kind === "Secret" ? { type: "Opaque" } : {}),
          data: encoded,
        };
        add(objects, obj, file);
      } else if (!existing) {
        throw new KustomizeError(`${file}: ${behavior} of missing ${kind}/${gen.name}`);
      } else {
        existing.data =
          behavior === "merge" ? { ...(existing.data as object), ...encoded } : encoded;
      }
    }
  }
}

function applyPatch(
  dir: string,
  patch: NonNullable<Kustomization["patches"]>[number],
  objects: K8sObject[],
  file: string,
) {
  const source = patch.path ? inside(dir, patch.path, file) : file;
  const text = patch.path ? readFileSync(source, "utf8") : (patch.patch ?? "");
  const docs = parseAllYaml(text, source);
  if (patch.target) {
    const ops = docs[0];
    if (!Array.isArray(ops)) throw new KustomizeError(`${source}: a JSON 6902 patch is a list`);
    const { kind, name } = patch.target;
    const target = objects.find((o) => o.kind === kind && o.metadata.name === name);
    if (!target) throw new KustomizeError(`${source}: no ${kind}/${name} to patch`);
    for (const op of ops) applyJsonPatchOp(target, op, source);
    return;
  }
  for (const doc of docs) {
    if (!isRecord(doc) || !isRecord(doc.metadata)) {
      throw new KustomizeError(`${source}: a strategic merge patch needs kind and metadata.name`);
    }
    const target = objects.find(
      (o) => o.kind === doc.kind && o.metadata.name === (doc.metadata as { name?: string }).name,
    );
    if (!target) {
      throw new KustomizeError(`${source}: no ${String(doc.kind)} named in the patch to patch`);
    }
    const { apiVersion: _a, kind: _k, ...rest } = doc;
    mergeInto(target, rest);
  }
}

/** Kubernetes strategic merge: maps merge, keyed lists merge by key, other lists replace. */
function mergeInto(target: Record<string, unknown>, patch: Record<string, unknown>) {
  for (const [key, value] of Object.entries(patch)) {
    const current = target[key];
    const mergeKey = MERGE_KEYS[key];
    if (value === null) delete target[key];
    else if (isRecord(value) && isRecord(current)) mergeInto(current, value);
    else if (mergeKey && Array.isArray(value) && Array.isArray(current)) {
      for (const item of value) {
        if (!isRecord(item)) throw new KustomizeError(`list ${key} holds a non-object`);
        const at = current.findIndex((c) => isRecord(c) && c[mergeKey] === item[mergeKey]);
        const { $patch, ...fields } = item;
        if ($patch === "delete") {
          if (at >= 0) current.splice(at, 1);
        } else if (at >= 0) mergeInto(current[at] as Record<string, unknown>, fields);
        else current.push(clone(fields));
      }
    } else target[key] = clone(value);
  }
}

function applyJsonPatchOp(target: K8sObject, op: unknown, source: string) {
  const parsed = z
    .strictObject({
      op: z.enum(["add", "replace", "remove"]),
      path: z.string().startsWith("/"),
      value: z.unknown().optional(),
    })
    .safeParse(op);
  if (!parsed.success) throw new KustomizeError(`${source}: ${z.prettifyError(parsed.error)}`);
  const { path, value } = parsed.data;
  const keys = path
    .slice(1)
    .split("/")
    .map((s) => s.replaceAll("~1", "/").replaceAll("~0", "~"));
  const last = keys.pop() as string;
  let node: unknown = target;
  for (const key of keys) {
    node = Array.isArray(node) ? node[Number(key)] : isRecord(node) ? node[key] : undefined;
    if (node === undefined) throw new KustomizeError(`${source}: ${path} does not exist`);
  }
  if (Array.isArray(node)) {
    const index = last === "-" ? node.length : Number(last);
    if (parsed.data.op === "remove") node.splice(index, 1);
    else node.splice(index, parsed.data.op === "replace" ? 1 : 0, clone(value));
  } else if (isRecord(node)) {
    if (parsed.data.op !== "add" && !(last in node)) {
      throw new KustomizeError(`${source}: ${path} does not exist`);
    }
    if (parsed.data.op === "remove") delete node[last];
    else node[last] = clone(value);
  }
}

/** spec.template of a workload. */
export function podTemplate(obj: K8sObject): Record<string, unknown> | undefined {
  if (!WORKLOADS.has(obj.kind)) return undefined;
  const template = (obj.spec as { template?: unknown } | undefined)?.template;
  return isRecord(template) ? template : undefined;
}

function setImages(
  objects: K8sObject[],
  image: NonNullable<Kustomization["images"]>[number],
  file: string,
) {
  let matched = false;
  for (const obj of objects) {
    const spec = podTemplate(obj)?.spec as Record<string, unknown> | undefined;
    for (const list of ["containers", "initContainers"]) {
      for (const c of (spec?.[list] as { image?: string }[] | undefined) ?? []) {
        if (!c.image) continue;
        const slash = c.image.lastIndexOf("/");
        const colon = c.image.lastIndexOf(":");
        const [name, tag] =
          colon > slash ? [c.image.slice(0, colon), c.image.slice(colon + 1)] : [c.image, ""];
        if (name !== image.name) continue;
        matched = true;
        const newTag = image.newTag ?? tag;
        c.image = `${image.newName ?? name}${newTag ? `:${newTag}` : ""}`;
      }
    }
  }
  if (!matched) throw new KustomizeError(`${file}: images: no container uses ${image.name}`);
}

function setNamespace(objects: K8sObject[], namespace: string) {
  const accounts = new Set(
    objects.filter((o) => o.kind === "ServiceAccount").map((o) => o.metadata.name),
  );
  for (const obj of objects) {
    if (!CLUSTER_SCOPED.has(obj.kind)) obj.metadata.namespace = namespace;
    if (obj.kind === "ClusterRoleBinding" || obj.kind === "RoleBinding") {
      for (const s of (obj.subjects as { kind: string; name: string; namespace?: string }[]) ??
        []) {
        if (s.kind === "ServiceAccount" && accounts.has(s.name)) s.namespace = namespace;
      }
    }
  }
}
