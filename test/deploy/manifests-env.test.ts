/**
 * deploy/kubernetes: images and environments. Every container starts with an environment its
 * service's env schema accepts, config comes from the ConfigMap and secrets from Secrets,
 * migrations run from their image, production pins image tags, and the mounted config passes
 * `tarsy config check`.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { type Container, effectiveEnv, find, podSpec, workloads } from "./support/k8s.ts";
import {
  containersOf,
  EXTERNAL_SECRETS,
  forEachOverlay,
  OVERLAYS,
  rendered,
  SERVICES,
} from "./support/manifests.ts";
import { run } from "./support/processes.ts";
import { ROOT } from "./support/yaml.ts";

forEachOverlay((objects) => {
  it("starts every TARSy container with an environment its own env schema accepts", async () => {
    for (const [name, folder] of Object.entries(SERVICES)) {
      const { EnvSchema } = (await import(resolve(ROOT, folder, "src/env.ts"))) as {
        EnvSchema: { safeParse(v: unknown): { success: boolean; error?: unknown } };
      };
      const container = podSpec(find(objects, "Deployment", name)).containers[0] as Container;
      // Without the optional Secrets (NATS token, token key) and with them.
      for (const withOptional of [false, true]) {
        const result = EnvSchema.safeParse(effectiveEnv(container, objects, withOptional));
        expect(result.success, `${name}: ${String(result.error)}`).toBe(true);
      }
    }
  });

  it("reads config from the ConfigMap and every secret from a Secret it names", () => {
    const rendered = new Set(objects.map((o) => `${o.kind}/${o.metadata.name}`));
    const docs = readFileSync(resolve(ROOT, "docs/operations.md"), "utf8");
    for (const obj of workloads(objects)) {
      const spec = podSpec(obj);
      for (const v of spec.volumes ?? []) {
        if (v.configMap) expect(rendered.has(`ConfigMap/${v.configMap.name}`), v.name).toBe(true);
      }
      for (const c of containersOf(obj)) {
        for (const from of c.envFrom ?? []) {
          if (from.configMapRef)
            expect(rendered.has(`ConfigMap/${from.configMapRef.name}`)).toBe(true);
          if (from.secretRef && !rendered.has(`Secret/${from.secretRef.name}`)) {
            expect(EXTERNAL_SECRETS).toContain(from.secretRef.name);
          }
        }
        for (const v of c.env ?? []) {
          if (v.value !== undefined) {
            expect(v.name, `${obj.metadata.name}: a secret as a literal`).not.toMatch(
              /(KEY|TOKEN|PASSWORD|SECRET)$/,
            );
          }
          const ref = v.valueFrom?.secretKeyRef;
          if (ref && !rendered.has(`Secret/${ref.name}`)) {
            expect(EXTERNAL_SECRETS, `${obj.metadata.name} ${v.name}`).toContain(ref.name);
            // An operator learns from the runbook which Secret and key to create.
            expect(docs).toContain(ref.name);
            expect(docs).toContain(ref.key);
          }
        }
      }
    }
    // Provider keys reach llm-service only.
    for (const obj of workloads(objects)) {
      const usesKeys = containersOf(obj).some((c) =>
        (c.envFrom ?? []).some((f) => f.secretRef?.name === "tarsy-llm-api-keys"),
      );
      expect(usesKeys, obj.metadata.name).toBe(obj.metadata.name === "llm-service");
    }
    // The Slack token and webhook secrets reach the notifier only, from an optional Secret.
    for (const obj of workloads(objects)) {
      const from = containersOf(obj).flatMap((c) =>
        (c.envFrom ?? []).filter((f) => f.secretRef?.name === "tarsy-notifications"),
      );
      expect(from.length, obj.metadata.name).toBe(obj.metadata.name === "notifier" ? 1 : 0);
      for (const f of from) expect(f.secretRef?.optional, obj.metadata.name).toBe(true);
    }
    expect(docs).toContain("tarsy-notifications");
    // Postgres is external: reached through DATABASE_URL from the Secret tarsy-database
    // (mcp-gateway reads the sealed user tokens of per-user MCP credentials there).
    for (const name of [
      "ingest-api",
      "orchestrator",
      "agent-runner",
      "stream-relay",
      "mcp-gateway",
      "notifier",
    ]) {
      const c = podSpec(find(objects, "Deployment", name)).containers[0] as Container;
      const db = c.env?.find((e) => e.name === "DATABASE_URL");
      expect(db?.valueFrom?.secretKeyRef, name).toMatchObject({
        name: "tarsy-database",
        key: "DATABASE_URL",
      });
    }
  });

  it("gives the user-token key to ingest-api and mcp-gateway only, from one Secret", () => {
    // ingest-api seals users' tokens with it, mcp-gateway opens them: the same key, or every
    // per-user tool call fails closed; no other container has any use for it.
    for (const obj of workloads(objects)) {
      for (const c of containersOf(obj)) {
        const key = c.env?.find((e) => e.name === "TARSY_TOKEN_KEY");
        const wants = ["ingest-api", "mcp-gateway"].includes(obj.metadata.name);
        const has = "TARSY_TOKEN_KEY" in effectiveEnv(c, objects, true);
        expect(has, `${obj.metadata.name}/${c.name} has TARSY_TOKEN_KEY`).toBe(wants);
        if (!wants) continue;
        expect(key?.valueFrom?.secretKeyRef, obj.metadata.name).toEqual({
          name: "tarsy-token-key",
          key: "TARSY_TOKEN_KEY",
          optional: true,
        });
      }
    }
  });

  it("gives the Alertmanager webhook credentials from a required Secret (authorization is on)", () => {
    // With authorization on, a webhook without credentials refuses every notification: the
    // pod must not start without them, and no other container needs them.
    for (const obj of workloads(objects)) {
      for (const c of containersOf(obj)) {
        const has = "ALERTMANAGER_BEARER_TOKEN" in effectiveEnv(c, objects, false);
        expect(has, `${obj.metadata.name}/${c.name}`).toBe(obj.metadata.name === "ingest-api");
      }
    }
    const api = podSpec(find(objects, "Deployment", "ingest-api")).containers[0] as Container;
    expect(api.env?.find((e) => e.name === "ALERTMANAGER_BEARER_TOKEN")?.valueFrom).toEqual({
      secretKeyRef: { name: "tarsy-alertmanager", key: "ALERTMANAGER_BEARER_TOKEN" },
    });
  });

  it("runs migrations as a Job from the migrate image, with the database Secret", () => {
    const job = find(objects, "Job", "tarsy-migrate");
    const c = podSpec(job).containers[0] as Container;
    expect(c.image).toMatch(/(^|\/)migrate(:|$)/);
    expect(c.env?.find((e) => e.name === "DATABASE_URL")?.valueFrom?.secretKeyRef?.name).toBe(
      "tarsy-database",
    );
    expect((podSpec(job) as { restartPolicy?: string }).restartPolicy).toBe("Never");
  });
});

describe("the cluster configuration", () => {
  it("passes `tarsy config check` as mounted from the ConfigMap", async () => {
    const data = find(rendered["overlays/production"], "ConfigMap", "tarsy-config").data as Record<
      string,
      string
    >;
    expect(Object.keys(data).sort()).toEqual(["llm-providers.yaml", "tarsy.yaml"]);
    const dir = mkdtempSync(join(tmpdir(), "tarsy-config-"));
    try {
      for (const [name, text] of Object.entries(data)) writeFileSync(join(dir, name), text);
      const result = await run(
        "node",
        [resolve(ROOT, "packages/cli/bin/tarsy.mjs"), "config", "check", "--config-dir", dir],
        { env: { PATH: process.env.PATH, GOOGLE_API_KEY: "set-in-the-secret" } },
      );
      expect(result.output).toContain("Configuration is valid.");
      expect(result.code).toBe(0);
      // The in-cluster MCP server is the binary the mcp-gateway image installs.
      expect(result.output).toMatch(
        /kubernetes-server \[overrides built-in\]: stdio: kubernetes-mcp-server /,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("authorization in the cluster", () => {
  it("is on in every overlay, with a policy that parses and names its IdP groups", async () => {
    const { loadConfig, parsePolicy } = (await import(
      resolve(ROOT, "packages/config/src/index.ts")
    )) as typeof import("../../packages/config/src/index.ts");
    for (const overlay of OVERLAYS) {
      const data = find(rendered[overlay], "ConfigMap", "tarsy-config").data as Record<
        string,
        string
      >;
      const dir = mkdtempSync(join(tmpdir(), "tarsy-config-"));
      try {
        for (const [name, text] of Object.entries(data)) writeFileSync(join(dir, name), text);
        const { authorization } = loadConfig({
          configDir: dir,
          env: { GOOGLE_API_KEY: "set-in-the-secret" },
        }).config;
        expect(authorization.enabled, overlay).toBe(true);
        expect(authorization.policy.trim(), overlay).not.toBe("");
        const { rules, problems } = parsePolicy(authorization.policy, authorization.projects);
        expect(problems, overlay).toEqual([]);
        // docs/operations.md "Authorization" tells the operator which groups to map.
        const groups = rules.flatMap((r) => (r.kind === "g" ? [r.member] : []));
        expect(groups, overlay).toEqual(["tarsy-admins", "tarsy-users"]);
        expect(
          rules.some((r) => r.kind === "p" && r.effect === "allow"),
          overlay,
        ).toBe(true);
        // No open door: nobody gets a role without a policy line, the webhook is not opened.
        expect(authorization.policy_default, overlay).toBe("");
        expect(authorization.alertmanager.allow_unauthenticated, overlay).toBe(false);
        expect(authorization.trusted_proxies.length, overlay).toBeGreaterThan(0);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
    const docs = readFileSync(resolve(ROOT, "docs/operations.md"), "utf8");
    for (const word of ["tarsy-admins", "tarsy-users", "trusted_proxies", "tarsy-alertmanager"]) {
      expect(docs).toContain(word);
    }
  });
});

describe("overlay specifics", () => {
  it("production pins every image to a tag", () => {
    for (const obj of workloads(rendered["overlays/production"])) {
      for (const c of containersOf(obj)) {
        expect(c.image, obj.metadata.name).toMatch(/:[\w][\w.-]*$/);
        expect(c.image).not.toMatch(/:latest$/);
      }
    }
  });
});
