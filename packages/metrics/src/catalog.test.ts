import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { METRICS, SERVICE_NAMES } from "./catalog.ts";

/** `| \`tarsy_x\` | type | labels | from |` rows of the Metrics table of docs/operations.md. */
function documentedMetrics() {
  const docs = readFileSync(new URL("../../../docs/operations.md", import.meta.url), "utf8");
  const rows = docs.matchAll(
    /^\|\s*`(tarsy_[a-z_]+)`\s*\|\s*(counter|gauge|histogram)\s*\|([^|]*)\|([^|]*)\|/gm,
  );
  return [...rows].map((m) => ({
    name: m[1] as string,
    type: m[2] as string,
    labels: [...(m[3] ?? "").matchAll(/`([a-z_]+)`/g)].map((l) => l[1]),
    from: (m[4] ?? "").trim(),
  }));
}

it("declares exactly the metrics of the operations guide, with their types and labels", () => {
  const documented = documentedMetrics();
  expect(documented.length).toBeGreaterThanOrEqual(20);
  const declared = Object.values(METRICS).map((m) => ({
    name: m.name,
    type: m.type,
    labels: [...m.labels],
  }));
  expect(declared).toEqual(documented.map(({ name, type, labels }) => ({ name, type, labels })));
});

it("registers each metric in the services the guide names", () => {
  for (const row of documentedMetrics()) {
    const def = Object.values(METRICS).find((m) => m.name === row.name);
    const from = [...(def?.from ?? [])];
    if (row.from === "every publisher") {
      expect(from.length, row.name).toBeGreaterThan(1);
    } else {
      expect(from.sort(), row.name).toEqual(row.from.split(/,\s*/).sort());
    }
    for (const service of from) expect(SERVICE_NAMES).toContain(service);
  }
});
