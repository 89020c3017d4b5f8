/**
 * deploy/kubernetes, every overlay: Prometheus scrape annotations naming the port that serves
 * /metrics, and NetworkPolicies that admit Prometheus there and nobody else to the ops ports.
 */
import { expect, it } from "vitest";
import {
  admitsIngress,
  containerPort,
  effectiveEnv,
  find,
  podAnnotations,
  podSpec,
  workloads,
} from "./support/k8s.ts";
import {
  forEachOverlay,
  METRICS_PORT_VARIABLE,
  OPS,
  OPS_SERVICES,
  PROMETHEUS,
  SERVICES,
  type Service,
  STRANGER,
  serviceContainer,
} from "./support/manifests.ts";

forEachOverlay((objects) => {
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
});
