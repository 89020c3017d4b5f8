/**
 * deploy/kubernetes: every Service port reachable through the default-deny NetworkPolicies,
 * llm-service balanced over its pods, and production's oauth2-proxy in front of the API.
 */
import { describe, expect, it } from "vitest";
import {
  byKind,
  type Container,
  effectiveEnv,
  find,
  podLabels,
  podSpec,
  selects,
  workloads,
} from "./support/k8s.ts";
import { forEachOverlay, rendered } from "./support/manifests.ts";

forEachOverlay((objects) => {
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

  it("lets the runners balance over every llm-service pod (headless Service, dns:/// target)", () => {
    const service = find(objects, "Service", "llm-service");
    expect((service.spec as { clusterIP?: string }).clusterIP).toBe("None");
    const runner = podSpec(find(objects, "Deployment", "agent-runner")).containers[0] as Container;
    const port = (service.spec as { ports: { port: number }[] }).ports[0]?.port;
    expect(effectiveEnv(runner, objects).LLM_SERVICE_ADDRESS).toBe(`dns:///llm-service:${port}`);
  });
});

describe("overlay specifics", () => {
  it("production puts oauth2-proxy in front: author headers passed, API reachable only through it", () => {
    const objects = rendered["overlays/production"];
    const proxy = podSpec(find(objects, "Deployment", "oauth2-proxy")).containers[0] as Container;
    expect(proxy.args).toContain("--pass-user-headers=true");
    // The user's token, which per-user MCP credentials use (X-Forwarded-Access-Token).
    expect(proxy.args).toContain("--pass-access-token=true");
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
});
