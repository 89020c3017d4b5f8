import { request } from "node:http";
import type { Bus } from "@tarsy/bus";
import type { AuthorizationConfig } from "@tarsy/config";
import { createSession, type Db } from "@tarsy/db";
import { createMetrics, type ServiceMetrics } from "@tarsy/metrics";
import { createProxyTrust } from "../src/proxy-trust.ts";
import { createRelayAccess } from "../src/relay-access.ts";
import type { Relay } from "../src/server.ts";
import { relayOn } from "./helpers.ts";

/** Two projects; alice sees alpha; root (a group of admins) sees everything. */
export function authorization(overrides: Partial<AuthorizationConfig> = {}): AuthorizationConfig {
  return {
    enabled: true,
    scopes: "groups",
    policy_default: "",
    projects: ["alpha", "beta"],
    default_project: "alpha",
    policy: [
      "g, alice, role:alpha-viewer",
      "g, admins, role:admin",
      "p, role:alpha-viewer, sessions, get, alpha/*, allow",
      "p, role:alpha-reader, sessions, get, alpha/*, allow",
      "p, role:admin, sessions, *, */*, allow",
    ].join("\n"),
    trusted_proxies: ["127.0.0.0/8", "::1"],
    alertmanager: { identity: "alertmanager", project: "alpha" },
    user_token_ttl_ms: 30 * 60_000,
    ...overrides,
  };
}

export const ALICE = { "X-Forwarded-User": "alice" };
export const ADMIN = { "X-Forwarded-User": "root", "X-Forwarded-Groups": "admins" };

export interface AccessRelay {
  relay: Relay;
  metrics: ServiceMetrics<"stream-relay">;
  /** Value of one labelled sample of the relay's registry (0 when absent). */
  sample(name: string, label: string, value: string): Promise<number>;
}

/** A relay with authorization from `config`, reading tokens and projects from `db`. */
export async function accessRelayOn(
  bus: Bus,
  db: Db,
  config: AuthorizationConfig = authorization(),
): Promise<AccessRelay> {
  const metrics = createMetrics("stream-relay", { processMetrics: false });
  // As main wires it: the trusted-proxy rule from the same config, whether or not it is on.
  const relay = await relayOn(bus, {
    metrics,
    access: await createRelayAccess(config, db.prisma),
    proxyTrust: createProxyTrust(config),
  });
  return {
    relay,
    metrics,
    async sample(name, label, value) {
      const text = await metrics.registry.metrics();
      const line = text
        .split("\n")
        .find((l) => l.startsWith(`${name}{`) && l.includes(`${label}="${value}"`));
      return line ? Number(line.split(" ").at(-1)) : 0;
    },
  };
}

/** A stored session in `project`. */
export async function sessionIn(db: Db, project: string): Promise<string> {
  const { session } = await createSession(db.prisma, {
    alertData: `alert in ${project}`,
    alertType: "kubernetes",
    chainId: "k8s-chain",
    project,
  });
  return session.id;
}

/** Publishes a session.status event (the `sessions` channel). */
export async function publishStatus(bus: Bus, sessionId: string): Promise<number> {
  const [result] = await bus.publish("sessionStatus", {
    v: 1,
    type: "session.status",
    session_id: sessionId,
    status: "in_progress",
    timestamp: new Date().toISOString(),
  });
  if (!result) throw new Error("publish returned nothing");
  return result.seq;
}

/** The answer to a WebSocket upgrade the relay refuses: status and JSON body. */
export function refusedUpgrade(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: unknown }> {
  const target = new URL(url.replace(/^ws/, "http"));
  return new Promise((resolve, reject) => {
    const req = request(target, {
      headers: {
        Connection: "Upgrade",
        Upgrade: "websocket",
        "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Key": Buffer.from("0123456789abcdef").toString("base64"),
        ...headers,
      },
    });
    req.on("upgrade", () => reject(new Error("the upgrade was accepted")));
    req.on("response", (res) => {
      let text = "";
      res.on("data", (chunk: Buffer) => {
        text += chunk.toString();
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on("error", reject);
    req.end();
  });
}
