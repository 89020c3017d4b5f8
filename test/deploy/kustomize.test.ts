/** The Kustomize subset renderer (support/kustomize.ts) does what kustomize does, or refuses. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { find, podSpec } from "./support/k8s.ts";
import { KustomizeError, renderKustomization } from "./support/kustomize.ts";

const root = mkdtempSync(join(tmpdir(), "tarsy-kustomize-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

/** Writes files (path → text) under a fresh directory and returns it. */
function tree(files: Record<string, string>): string {
  const dir = join(root, `case-${++n}`);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

const KUSTOMIZATION = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n";
const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata: { name: app }
spec:
  replicas: 2
  selector: { matchLabels: { app: app } }
  template:
    metadata: { labels: { app: app } }
    spec:
      containers:
        - name: app
          image: example/app
          args: ["--a", "--b"]
          env:
            - { name: A, value: "1" }
            - { name: B, value: "2" }
        - name: sidecar
          image: example/sidecar:1.0
---
apiVersion: v1
kind: ServiceAccount
metadata: { name: runner }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: runner-view }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view }
subjects:
  - { kind: ServiceAccount, name: runner, namespace: default }
`;

describe("renderKustomization", () => {
  const dir = tree({
    "base/kustomization.yaml": `${KUSTOMIZATION}resources: [app.yaml]\n`,
    "base/app.yaml": DEPLOYMENT,
    "overlay/kustomization.yaml": `${KUSTOMIZATION}namespace: team
labels:
  - pairs: { tier: backend }
    includeSelectors: false
    includeTemplates: true
resources: [../base]
images:
  - { name: example/app, newName: registry.example/app, newTag: "2.0" }
replicas:
  - { name: app, count: 5 }
patches:
  - path: patch.yaml
  - target: { kind: ClusterRoleBinding, name: runner-view }
    patch: |-
      - op: replace
        path: /metadata/name
        value: team-runner-view
generatorOptions: { disableNameSuffixHash: true }
configMapGenerator:
  - name: settings
    files: [config/app.yaml]
    literals: [MODE=fast]
secretGenerator:
  - name: creds
    literals: [TOKEN=abc]
`,
    "overlay/config/app.yaml": "key: value\n",
    "overlay/patch.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: { name: app }
spec:
  template:
    spec:
      containers:
        - name: app
          args: ["--c"]
          env:
            - { name: B, value: "20" }
            - { name: C, value: "3" }
        - name: sidecar
          $patch: delete
`,
  });
  const objects = renderKustomization(join(dir, "overlay"));
  const app = find(objects, "Deployment", "app");
  const containers = podSpec(app).containers;

  it("merges containers and env by name, replaces other lists, deletes on $patch", () => {
    expect(containers.map((c) => c.name)).toEqual(["app"]);
    expect(containers[0]?.args).toEqual(["--c"]);
    expect(containers[0]?.env).toEqual([
      { name: "A", value: "1" },
      { name: "B", value: "20" },
      { name: "C", value: "3" },
    ]);
  });

  it("sets images, replicas, labels on objects and pod templates, and the namespace", () => {
    expect(containers[0]?.image).toBe("registry.example/app:2.0");
    expect((app.spec as { replicas: number }).replicas).toBe(5);
    expect(app.metadata.labels).toEqual({ tier: "backend" });
    expect(
      (app.spec as { template: { metadata: { labels: object } } }).template.metadata.labels,
    ).toEqual({
      app: "app",
      tier: "backend",
    });
    expect((app.spec as { selector: object }).selector).toEqual({ matchLabels: { app: "app" } });
    expect(app.metadata.namespace).toBe("team");
    const binding = find(objects, "ClusterRoleBinding", "team-runner-view");
    expect(binding.metadata.namespace).toBeUndefined();
    expect(binding.subjects).toEqual([
      { kind: "ServiceAccount", name: "runner", namespace: "team" },
    ]);
  });

  it("generates ConfigMaps from files and literals and base64 Secrets", () => {
    expect(find(objects, "ConfigMap", "settings").data).toEqual({
      "app.yaml": "key: value\n",
      MODE: "fast",
    });
    expect(find(objects, "Secret", "creds").data).toEqual({
      TOKEN: Buffer.from("abc").toString("base64"),
    });
  });
});

describe("refuses what it does not implement or kustomize forbids", () => {
  const cases: [string, Record<string, string>][] = [
    ["an unknown field", { "kustomization.yaml": `${KUSTOMIZATION}commonLabels: { a: b }\n` }],
    [
      "generator hash suffixes",
      {
        "kustomization.yaml": `${KUSTOMIZATION}configMapGenerator:\n  - { name: c, literals: [A=1] }\n`,
      },
    ],
    [
      "a file outside the kustomization",
      {
        "k/kustomization.yaml": `${KUSTOMIZATION}generatorOptions: { disableNameSuffixHash: true }\nconfigMapGenerator:\n  - { name: c, files: [../secret.txt] }\n`,
        "secret.txt": "x",
      },
    ],
    [
      "a patch of a missing object",
      {
        "kustomization.yaml": `${KUSTOMIZATION}resources: [app.yaml]\npatches:\n  - path: p.yaml\n`,
        "app.yaml": DEPLOYMENT,
        "p.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: { name: other }\n",
      },
    ],
    [
      "an image no container uses",
      {
        "kustomization.yaml": `${KUSTOMIZATION}resources: [app.yaml]\nimages:\n  - { name: example/typo, newTag: "1" }\n`,
        "app.yaml": DEPLOYMENT,
      },
    ],
    [
      "the same object twice",
      {
        "kustomization.yaml": `${KUSTOMIZATION}resources: [app.yaml, again.yaml]\n`,
        "app.yaml": DEPLOYMENT,
        "again.yaml": DEPLOYMENT,
      },
    ],
  ];
  it.each(cases)("%s", (_, files) => {
    const dir = tree(files);
    const entry = Object.keys(files)[0]?.startsWith("k/") ? join(dir, "k") : dir;
    expect(() => renderKustomization(entry)).toThrow(KustomizeError);
  });
});
