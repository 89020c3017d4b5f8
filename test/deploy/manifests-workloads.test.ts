/**
 * deploy/kubernetes, every overlay: objects valid against the vendored Kubernetes and KEDA
 * schemas, named once, non-root with resources, time to shut down gracefully, disruption
 * budgets and autoscaling bound to the right stream and consumer.
 */
import { CONSUMERS, STREAMS } from "@tarsy/contracts";
import { expect, it } from "vitest";
import { validators } from "./schemas/generated/kubernetes-validators.js";
import {
  byKind,
  type Container,
  effectiveEnv,
  find,
  podLabels,
  podSpec,
  quantity,
  selects,
  workloads,
} from "./support/k8s.ts";
import { containersOf, forEachOverlay, natsConf, SERVICES } from "./support/manifests.ts";

forEachOverlay((objects) => {
  it("validates every object against the Kubernetes and KEDA schemas", () => {
    const failures = objects.flatMap((obj) => {
      const validate = validators[`${obj.apiVersion}/${obj.kind}`];
      if (!validate) return [`${obj.apiVersion}/${obj.kind}: no vendored schema`];
      if (validate(obj)) return [];
      return (validate.errors ?? []).map(
        (e) =>
          `${obj.kind}/${obj.metadata.name}${e.instancePath}: ${e.keyword} ${JSON.stringify(e.params)}`,
      );
    });
    expect(failures).toEqual([]);
    expect(objects.length).toBeGreaterThan(30);
  });

  it("names every object once per kind and labels it part-of tarsy", () => {
    const ids = objects.map((o) => `${o.kind}/${o.metadata.name}`);
    expect(new Set(ids).size).toBe(ids.length);
    for (const obj of objects) {
      expect(obj.metadata.labels?.["app.kubernetes.io/part-of"], obj.metadata.name).toBe("tarsy");
    }
  });

  it("runs every container as a non-root user without privileges, with requests and limits", () => {
    for (const obj of workloads(objects)) {
      const spec = podSpec(obj);
      expect(spec.securityContext?.runAsNonRoot, obj.metadata.name).toBe(true);
      expect(spec.securityContext?.runAsUser, obj.metadata.name).toBeGreaterThan(0);
      for (const c of containersOf(obj)) {
        const where = `${obj.metadata.name}/${c.name}`;
        expect(c.securityContext?.allowPrivilegeEscalation, where).toBe(false);
        expect(c.securityContext?.readOnlyRootFilesystem, where).toBe(true);
        expect(c.securityContext?.capabilities?.drop, where).toContain("ALL");
        for (const resource of ["cpu", "memory"]) {
          const request = c.resources?.requests?.[resource];
          const limit = c.resources?.limits?.[resource];
          expect(request, `${where} requests.${resource}`).toBeDefined();
          expect(limit, `${where} limits.${resource}`).toBeDefined();
          expect(quantity(limit ?? 0), where).toBeGreaterThanOrEqual(quantity(request ?? 0));
        }
        // A read-only root needs a writable /tmp: tsx caches compiled sources there.
        if (obj.metadata.name in SERVICES) {
          expect(
            c.volumeMounts?.map((m) => m.mountPath),
            where,
          ).toContain("/tmp");
        }
      }
    }
  });

  it("gives every service time to hand in-flight work back before it is killed", () => {
    for (const name of Object.keys(SERVICES)) {
      const spec = podSpec(find(objects, "Deployment", name));
      const container = spec.containers[0] as Container;
      const env = effectiveEnv(container, objects);
      const shutdownMs = Number(env.SHUTDOWN_TIMEOUT_MS ?? 30_000);
      const preStop = container.lifecycle?.preStop?.exec?.command;
      const preStopMs = preStop?.[0] === "sleep" ? Number(preStop[1]) * 1000 : 0;
      const graceMs = (spec.terminationGracePeriodSeconds ?? 30) * 1000;
      expect(graceMs, name).toBeGreaterThanOrEqual(shutdownMs + preStopMs + 5_000);
    }
    const runner = podSpec(find(objects, "Deployment", "agent-runner")).containers[0] as Container;
    const env = effectiveEnv(runner, objects);
    // Executions run on for the grace, then are handed back before the shutdown deadline.
    expect(Number(env.RUNNER_SHUTDOWN_GRACE_MS)).toBeLessThan(
      Number(env.SHUTDOWN_TIMEOUT_MS) - 5_000,
    );
    // The gateway lets a tool call in flight finish.
    const gateway = podSpec(find(objects, "Deployment", "mcp-gateway")).containers[0] as Container;
    const gwEnv = effectiveEnv(gateway, objects);
    expect(Number(gwEnv.SHUTDOWN_TIMEOUT_MS)).toBeGreaterThan(Number(gwEnv.MCP_CALL_TIMEOUT_MS));
  });

  it("covers every Deployment and StatefulSet by exactly one PodDisruptionBudget that allows a drain", () => {
    const pdbs = byKind(objects, "PodDisruptionBudget");
    const targets = [...byKind(objects, "Deployment"), ...byKind(objects, "StatefulSet")];
    for (const pdb of pdbs) {
      const spec = pdb.spec as { selector: object; maxUnavailable?: number; minAvailable?: number };
      const matched = targets.filter((w) => selects(spec.selector, podLabels(w)));
      expect(
        matched.map((w) => w.metadata.name),
        `PDB ${pdb.metadata.name}`,
      ).toHaveLength(1);
      // maxUnavailable keeps a single replica drainable; minAvailable could block a node.
      expect(spec.maxUnavailable, pdb.metadata.name).toBeGreaterThanOrEqual(1);
      expect(spec.minAvailable, pdb.metadata.name).toBeUndefined();
    }
    for (const w of targets) {
      const covering = pdbs.filter((p) =>
        selects((p.spec as { selector: object }).selector, podLabels(w)),
      );
      expect(covering, w.metadata.name).toHaveLength(1);
    }
  });

  it("autoscales ingest-api and stream-relay on CPU and the runners on their JetStream backlog", () => {
    for (const name of ["ingest-api", "stream-relay"]) {
      const hpa = find(objects, "HorizontalPodAutoscaler", name).spec as {
        scaleTargetRef: { kind: string; name: string };
        minReplicas: number;
        maxReplicas: number;
      };
      expect(hpa.scaleTargetRef).toMatchObject({ kind: "Deployment", name });
      find(objects, "Deployment", name);
      expect(hpa.minReplicas).toBeGreaterThanOrEqual(1);
      expect(hpa.maxReplicas).toBeGreaterThan(hpa.minReplicas);
    }

    const scaled = find(objects, "ScaledObject", "agent-runner").spec as {
      scaleTargetRef: { name: string };
      minReplicaCount: number;
      triggers: { type: string; metadata: Record<string, string> }[];
    };
    expect(scaled.scaleTargetRef.name).toBe("agent-runner");
    expect(scaled.minReplicaCount).toBeGreaterThanOrEqual(1);
    const runner = find(objects, "Deployment", "agent-runner");
    const env = effectiveEnv(podSpec(runner).containers[0] as Container, objects);
    expect(scaled.triggers).toHaveLength(1);
    const trigger = scaled.triggers[0];
    expect(trigger?.type).toBe("nats-jetstream");
    // The stream the runners' consumer reads, with the deployment's suffix, and its durable.
    expect(trigger?.metadata.stream).toBe(`${STREAMS.work.name}${env.TARSY_STREAM_SUFFIX ?? ""}`);
    expect(trigger?.metadata.consumer).toBe(CONSUMERS.runner.durable);
    expect(CONSUMERS.runner.filterSubject).toBe("work.runner.>"); // wire-literal: KEDA's trigger assumes this filter
    // One replica absorbs as many waiting executions as it has slots.
    expect(trigger?.metadata.lagThreshold).toBe(env.RUNNER_CONCURRENCY);
    // KEDA reaches the consumer's leader as <server_name>.<endpoint>: the headless Service of
    // this namespace, whose pods are named like the servers.
    const namespace = runner.metadata.namespace;
    const headless = find(objects, "Service", "nats-headless");
    const sts = find(objects, "StatefulSet", "nats");
    expect((sts.spec as { serviceName: string }).serviceName).toBe("nats-headless");
    expect((headless.spec as { clusterIP: string }).clusterIP).toBe("None");
    expect(trigger?.metadata.natsServerMonitoringEndpoint).toBe(
      namespace ? `nats-headless.${namespace}.svc.cluster.local:8222` : expect.any(String),
    );
    expect(natsConf(objects)).toMatch(/^server_name: \$POD_NAME$/m);
    const natsEnv = podSpec(sts).containers[0]?.env ?? [];
    expect(natsEnv.find((e) => e.name === "POD_NAME")?.valueFrom?.fieldRef?.fieldPath).toBe(
      "metadata.name",
    );
    expect(trigger?.metadata.account).toBe("$G");
  });
});
