/**
 * deploy/kubernetes: the NATS servers. Streams replicate no more than the servers allow and
 * every server is routed; production runs three authenticated servers, dev one.
 */
import { describe, expect, it } from "vitest";
import { byKind, type Container, effectiveEnv, find, podSpec } from "./support/k8s.ts";
import { forEachOverlay, natsConf, rendered, SERVICES } from "./support/manifests.ts";

forEachOverlay((objects) => {
  it("replicates streams no more than the NATS servers allow, routing every server", () => {
    const sts = find(objects, "StatefulSet", "nats");
    const servers = (sts.spec as { replicas: number }).replicas;
    const conf = natsConf(objects);
    const routes = [...conf.matchAll(/nats:\/\/(nats-\d+)\.nats-headless:6222/g)].map((m) => m[1]);
    if (servers > 1) {
      expect(routes).toEqual(Array.from({ length: servers }, (_, i) => `nats-${i}`));
    } else {
      expect(conf).not.toMatch(/cluster\s*{/);
    }
    expect(conf).toMatch(/jetstream\s*{/);
    for (const name of Object.keys(SERVICES)) {
      if (name === "llm-service") continue;
      const env = effectiveEnv(
        podSpec(find(objects, "Deployment", name)).containers[0] as Container,
        objects,
      );
      expect(Number(env.TARSY_STREAM_REPLICAS), name).toBeLessThanOrEqual(servers);
      expect(env.NATS_URL, name).toBe("nats://nats:4222");
    }
  });
});

describe("overlay specifics", () => {
  it("production replicates every stream 3 times on a 3-node cluster with authenticated clients", () => {
    const objects = rendered["overlays/production"];
    expect((find(objects, "StatefulSet", "nats").spec as { replicas: number }).replicas).toBe(3);
    const env = find(objects, "ConfigMap", "tarsy-env").data as Record<string, string>;
    expect(env.TARSY_STREAM_REPLICAS).toBe("3");
    const auth = (find(objects, "ConfigMap", "nats-config").data as Record<string, string>)[
      "auth.conf"
    ];
    expect(auth).toMatch(/authorization\s*{\s*token: \$NATS_TOKEN\s*}/);
    // Every NATS client and server reads the same token.
    for (const obj of [...byKind(objects, "Deployment"), ...byKind(objects, "StatefulSet")]) {
      if (obj.metadata.name === "llm-service" || obj.metadata.name === "oauth2-proxy") continue;
      const token = podSpec(obj).containers[0]?.env?.find((e) => e.name === "NATS_TOKEN");
      expect(token?.valueFrom?.secretKeyRef, obj.metadata.name).toMatchObject({
        name: "tarsy-nats",
        key: "token",
      });
    }
  });

  it("dev runs one NATS server, so streams have one replica", () => {
    const objects = rendered["overlays/dev"];
    expect((find(objects, "StatefulSet", "nats").spec as { replicas: number }).replicas).toBe(1);
    expect(
      (find(objects, "ConfigMap", "tarsy-env").data as Record<string, string>)
        .TARSY_STREAM_REPLICAS,
    ).toBe("1");
    expect(find(objects, "ClusterRoleBinding", "tarsy-dev-mcp-gateway-view").subjects).toEqual([
      { kind: "ServiceAccount", name: "tarsy-mcp-gateway", namespace: "tarsy-dev" },
    ]);
  });
});
