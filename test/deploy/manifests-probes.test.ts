/**
 * deploy/kubernetes, every overlay: readiness, liveness and startup probes, and the ops
 * server each service runs on its metrics port.
 */
import { MetricsEnvShape } from "@tarsy/metrics";
import { expect, it } from "vitest";
import { z } from "zod";
import {
  byKind,
  containerPort,
  effectiveEnv,
  find,
  podSpec,
  probeBudget,
  probeEndpoint,
} from "./support/k8s.ts";
import {
  DEPENDENCY_PATHS,
  envDefault,
  envSource,
  forEachOverlay,
  OPS,
  OPS_SERVICES,
  SLOW_STARTERS,
  serviceContainer,
} from "./support/manifests.ts";

forEachOverlay((objects) => {
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
});
