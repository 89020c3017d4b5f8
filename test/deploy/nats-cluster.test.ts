/**
 * The NATS configuration the manifests ship, run by a real nats-server: every overlay's
 * nats.conf passes `nats-server -t`, and the production overlay's forms a 3-node JetStream
 * cluster on which the services' provisioning (TARSY_STREAM_REPLICAS from the overlay)
 * creates every stream with 3 replicas, clients need the token, the probe paths answer,
 * and the streams keep a leader when one server dies.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type Bus, type BusAdmin, NatsEnvShape } from "@tarsy/bus";
import { STREAMS } from "@tarsy/contracts";
import { createTestBus, until } from "@tarsy/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { find, podSpec } from "./support/k8s.ts";
import { renderKustomization } from "./support/kustomize.ts";
import { freePort, get, run, type Started, start } from "./support/processes.ts";
import { ROOT } from "./support/yaml.ts";

const NATS_SERVER = process.env.NATS_SERVER_BIN ?? "/usr/sbin/nats-server";
const TOKEN = "t0ken-for-the-test";

function natsFiles(overlay: string) {
  const objects = renderKustomization(resolve(ROOT, "deploy/kubernetes", overlay));
  const data = find(objects, "ConfigMap", "nats-config").data as Record<string, string>;
  const env = find(objects, "ConfigMap", "tarsy-env").data as Record<string, string>;
  const sts = find(objects, "StatefulSet", "nats");
  return { data, env, objects, sts };
}

function writeConfig(dir: string, data: Record<string, string>): string {
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(data)) writeFileSync(join(dir, name), text);
  return join(dir, "nats.conf");
}

const work = mkdtempSync(join(tmpdir(), "tarsy-nats-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe.each(["base", "overlays/dev", "overlays/production"])("nats.conf of %s", (overlay) => {
  it("is accepted by nats-server -t", async () => {
    const conf = writeConfig(join(work, overlay.replace("/", "-")), natsFiles(overlay).data);
    const result = await run(NATS_SERVER, ["-c", conf, "-t"], {
      env: { ...process.env, POD_NAME: "nats-0", NATS_TOKEN: TOKEN },
    });
    expect(result.output).toMatch(/configuration file .* is valid/);
    expect(result.code).toBe(0);
  });
});

describe("the production overlay's 3-node JetStream cluster", () => {
  const { data, env, sts } = natsFiles("overlays/production");
  const replicas = (sts.spec as { replicas: number }).replicas;
  const servers: { name: string; client: number; monitor: number; proc: Started }[] = [];
  let suffix = "";
  let bus: Bus;
  let admin: BusAdmin;

  beforeAll(async () => {
    expect(replicas).toBe(3);
    const ports = await Promise.all(
      Array.from({ length: replicas }, async () => ({
        client: await freePort(),
        cluster: await freePort(),
        monitor: await freePort(),
      })),
    );
    const routes = ports.map((p) => `nats://127.0.0.1:${p.cluster}`).join(",");
    for (const [i, p] of ports.entries()) {
      const dir = join(work, `cluster-${i}`);
      // The pods' volumes, ports and routes (nats-N.nats-headless:6222) mapped to this
      // machine; everything else is the rendered configuration.
      const local = {
        ...data,
        "nats.conf": (data["nats.conf"] ?? "")
          .replace("store_dir: /data/jetstream", `store_dir: ${join(dir, "data")}`)
          .replace("pid_file: /var/run/nats/nats.pid", `pid_file: ${join(dir, "nats.pid")}`),
      };
      expect(local["nats.conf"]).not.toBe(data["nats.conf"]);
      const conf = writeConfig(dir, local);
      const proc = start(
        NATS_SERVER,
        [
          ["-c", conf, "-a", "127.0.0.1", "-p", String(p.client), "-m", String(p.monitor)],
          ["--cluster", `nats://127.0.0.1:${p.cluster}`, "--routes", routes],
        ].flat(),
        { env: { ...process.env, POD_NAME: `nats-${i}`, NATS_TOKEN: TOKEN } },
      );
      servers.push({ name: `nats-${i}`, client: p.client, monitor: p.monitor, proc });
    }
    // The StatefulSet's startup probe: JetStream up on every server.
    const startup = podSpec(sts).containers[0]?.startupProbe?.httpGet?.path ?? "";
    for (const s of servers) {
      await until(
        async () => {
          const res = await get(`http://127.0.0.1:${s.monitor}${startup}`);
          return res?.status === 200 ? res : undefined;
        },
        { what: `${s.name} ${startup}`, retryErrors: true },
      );
    }
    // What the services read in production: the token, the overlay's stream replicas.
    const natsEnv = z.object(NatsEnvShape).parse({
      NATS_URL: servers.map((s) => `nats://127.0.0.1:${s.client}`).join(","),
      NATS_TOKEN: TOKEN,
      TARSY_STREAM_REPLICAS: env.TARSY_STREAM_REPLICAS,
    });
    // Connecting asks JetStream for the account, which times out until the cluster has a
    // meta leader (slow on a loaded machine): retry.
    const testBus = await until(
      () =>
        createTestBus({
          servers: natsEnv.NATS_URL.split(","),
          auth: { kind: "token", token: natsEnv.NATS_TOKEN ?? "" },
          replicas: natsEnv.TARSY_STREAM_REPLICAS,
          skipProvision: true,
        }).catch(() => undefined),
      { what: "JetStream answers on the cluster", timeoutMs: 60_000, retryErrors: true },
    );
    bus = testBus.bus;
    admin = testBus.admin;
    suffix = testBus.streamSuffix;
    // Until the JetStream meta leader is elected, stream creation is refused: retry.
    await until(() => admin.provision(), {
      what: "streams provisioned",
      timeoutMs: 60_000,
      retryErrors: true,
    });
  }, 120_000);

  afterAll(async () => {
    await bus?.close();
    for (const s of servers) s.proc.child.kill("SIGKILL");
    await Promise.all(servers.map((s) => s.proc.exited));
  });

  const streamDetails = async (monitor: number) => {
    const res = await get(`http://127.0.0.1:${monitor}/jsz?streams=true&config=true`);
    const body = JSON.parse(res?.body ?? "{}") as {
      account_details?: {
        stream_detail?: {
          name: string;
          config: { num_replicas: number };
          cluster?: { leader?: string; replicas?: { name: string; current: boolean }[] };
        }[];
      }[];
    };
    return (body.account_details ?? []).flatMap((a) => a.stream_detail ?? []);
  };

  it("holds every TARSy stream on all 3 servers", async () => {
    const names = Object.values(STREAMS).map((s) => `${s.name}${suffix}`);
    const details = await until(
      async () => {
        const found = (await streamDetails(servers[0]?.monitor ?? 0)).filter((d) =>
          names.includes(d.name),
        );
        const settled = found.filter((d) => d.cluster?.leader && d.cluster.replicas?.length === 2);
        return settled.length === names.length ? found : undefined;
      },
      { what: "every stream with a leader and 2 followers", retryErrors: true },
    );
    for (const d of details) {
      expect(d.config.num_replicas, d.name).toBe(3);
      // jsz lists the peers other than the reporting server (nats-0) itself.
      const members = [
        servers[0]?.name,
        d.cluster?.leader,
        ...(d.cluster?.replicas ?? []).map((r) => r.name),
      ];
      expect(new Set(members), d.name).toEqual(new Set(servers.map((s) => s.name)));
    }
  }, 60_000);

  it("refuses clients without the token", async () => {
    const info = await new Promise<string>((resolveInfo, reject) => {
      const socket = connect(servers[0]?.client ?? 0, "127.0.0.1");
      socket.once("data", (d) => {
        resolveInfo(d.toString());
        socket.destroy();
      });
      socket.once("error", reject);
    });
    expect(info).toMatch(/^INFO /);
    expect(info).toContain('"auth_required":true');
  });

  it("answers the StatefulSet's readiness and liveness paths", async () => {
    const container = podSpec(sts).containers[0];
    for (const probe of [container?.readinessProbe, container?.livenessProbe]) {
      const path = probe?.httpGet?.path ?? "";
      for (const s of servers) {
        expect(
          (await get(`http://127.0.0.1:${s.monitor}${path}`))?.status,
          `${s.name} ${path}`,
        ).toBe(200);
      }
    }
  });

  it("keeps every stream led when one server dies", async () => {
    const [dead, ...alive] = servers;
    dead?.proc.child.kill("SIGKILL");
    await dead?.proc.exited;
    const names = Object.values(STREAMS).map((s) => `${s.name}${suffix}`);
    const details = await until(
      async () => {
        const found = (await streamDetails(alive[0]?.monitor ?? 0)).filter((d) =>
          names.includes(d.name),
        );
        const led = found.filter((d) => d.cluster?.leader && d.cluster.leader !== dead?.name);
        return led.length === names.length ? led : undefined;
      },
      {
        what: "a leader on a surviving server for every stream",
        timeoutMs: 30_000,
        retryErrors: true,
      },
    );
    expect(details.map((d) => d.name).sort()).toEqual([...names].sort());
    // The cluster still takes configuration changes (the meta group has its quorum of 2),
    // once the consumers led by the dead server have elected new leaders.
    const report = await until(() => admin.provision(), {
      what: "provisioning with one server down",
      timeoutMs: 45_000,
      retryErrors: true,
    });
    expect(Object.keys(report.streams)).toHaveLength(names.length);
  }, 90_000);
});
