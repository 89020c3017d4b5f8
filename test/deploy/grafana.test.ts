/**
 * The Grafana dashboard charts exactly the metric scheme docs/operations.md documents, with
 * Prometheus naming conventions, so the dashboard works once the services export them.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { METRICS } from "@tarsy/metrics";
import { expect, it } from "vitest";
import { ROOT } from "./support/yaml.ts";

interface Panel {
  type: string;
  title: string;
  targets?: { expr: string }[];
}
const dashboard = JSON.parse(
  readFileSync(resolve(ROOT, "deploy/grafana/tarsy-dashboard.json"), "utf8"),
) as { uid: string; panels: Panel[]; templating: { list: { name: string; type: string }[] } };
const docs = readFileSync(resolve(ROOT, "docs/operations.md"), "utf8");

/** `| \`tarsy_x\` | type | labels |` rows of the Metrics table. */
const documented = new Map(
  [
    ...docs.matchAll(/^\|\s*`(tarsy_[a-z_]+)`\s*\|\s*(counter|gauge|histogram)\s*\|([^|]*)\|/gm),
  ].map((m) => [
    m[1] as string,
    { type: m[2] as string, labels: [...(m[3] ?? "").matchAll(/`([a-z_]+)`/g)].map((l) => l[1]) },
  ]),
);

it("documents every metric with a conventional name", () => {
  expect(documented.size).toBeGreaterThanOrEqual(15);
  for (const [name, { type }] of documented) {
    if (type === "counter") expect(name).toMatch(/_total$/);
    if (type === "histogram") expect(name).toMatch(/_seconds$/);
    if (type === "gauge") expect(name).not.toMatch(/_total$/);
  }
});

it("charts every documented metric and nothing undocumented", () => {
  const used = new Map<string, Set<string>>();
  for (const panel of dashboard.panels.filter((p) => p.type !== "row")) {
    expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
    for (const { expr } of panel.targets ?? []) {
      for (const m of expr.matchAll(/\b(tarsy_[a-z_]+?)(_bucket)?\b/g)) {
        const name = m[1] as string;
        const labels = used.get(name) ?? new Set<string>();
        for (const by of expr.matchAll(/by \(([^)]*)\)/g)) {
          for (const l of (by[1] ?? "").split(",")) labels.add(l.trim());
        }
        used.set(name, labels);
        // Histograms are read through their buckets, counters through rate/increase.
        const type = documented.get(name)?.type;
        if (type === "histogram") expect(m[2], `${name} in ${panel.title}`).toBe("_bucket");
        if (type === "counter") expect(expr, panel.title).toMatch(/(rate|increase)\(/);
      }
    }
  }
  expect([...used.keys()].sort()).toEqual([...documented.keys()].sort());
  // Grouping labels exist on the metric (le comes with every histogram).
  for (const [name, labels] of used) {
    const allowed = new Set([...(documented.get(name)?.labels ?? []), "le"]);
    for (const l of labels) expect(allowed.has(l), `${name} by ${l}`).toBe(true);
  }
});

it("asks for its Prometheus data source instead of hard-coding one", () => {
  expect(dashboard.templating.list).toContainEqual(
    expect.objectContaining({ name: "datasource", type: "datasource" }),
  );
  expect(JSON.stringify(dashboard.panels)).not.toMatch(/"uid":"(?!\$\{datasource\})/);
});

it("aggregates a gauge every replica reports alike with max, never sum", () => {
  const shared = Object.values(METRICS).flatMap((m) =>
    "scope" in m && m.scope === "cluster" ? [m.name] : [],
  );
  expect(shared).toEqual(["tarsy_sessions_active", "tarsy_work_backlog_messages"]);
  const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
  for (const name of shared) {
    const uses = exprs.filter((e) => e.includes(name));
    expect(uses.length, name).toBeGreaterThan(0);
    for (const expr of uses) {
      expect(expr, name).toMatch(new RegExp(`\\bmax( by \\([^)]*\\) ?)?\\(${name}\\b`));
      expect(expr, name).not.toMatch(/\bsum\b/);
    }
  }
});
