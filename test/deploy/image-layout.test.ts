/**
 * What the images contain, built for real without Docker: deploy/docker/install-prod.sh
 * (the step every Dockerfile runs) lays out a package with production dependencies only,
 * and the services then start from that layout the way the images start them (node with
 * tsx's loader), answer their health checks, stop cleanly on SIGTERM, and the migrate
 * layout's `pnpm db:migrate` migrates an empty database. The services without a public port
 * answer the image's probes on their ops server (/health, /ready, /metrics).
 */
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";
import { createTestDatabase, natsUrl, until } from "@tarsy/testkit";
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { freePort, get, run, start } from "./support/processes.ts";
import { ROOT } from "./support/yaml.ts";

/** The image installs the same tsx version globally (root devDependency, checked in dockerfiles.test.ts). */
const TSX_LOADER = `file://${resolve(ROOT, "node_modules/tsx/dist/loader.mjs")}`;
const work = mkdtempSync(join(tmpdir(), "tarsy-image-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function layout(pkg: string): Promise<string> {
  const out = join(work, pkg.replace(/\W/g, "_"));
  const result = await run("sh", ["deploy/docker/install-prod.sh", pkg, out], { cwd: ROOT });
  expect(result.code, result.output).toBe(0);
  return out;
}

const prefix = `img${Date.now().toString(36)}`;

describe("the stream-relay image layout", () => {
  it("holds production dependencies only and serves /ready, then stops on SIGTERM", async () => {
    const out = await layout("@tarsy/stream-relay");
    const store = readdirSync(join(out, "node_modules/.pnpm"));
    expect(store.some((d) => d.startsWith("ws@"))).toBe(true);
    // typescript is there as a peer of the Prisma client the relay reads projects with (a
    // production dependency since authorization), so it is not among the dev packages here.
    for (const dev of ["vitest@", "@biomejs", "@types+ws", "@vitest+"]) {
      expect(
        store.filter((d) => d.startsWith(dev)),
        dev,
      ).toEqual([]);
    }
    expect(existsSync(join(out, "services/stream-relay/test"))).toBe(false);
    expect(existsSync(join(out, "services/stream-relay/node_modules/@tarsy/testkit"))).toBe(false);
    expect(existsSync(join(out, "packages/bus/src/index.ts"))).toBe(true);

    const port = await freePort();
    const relay = start("node", ["--import", TSX_LOADER, "src/main.ts"], {
      cwd: join(out, "services/stream-relay"),
      env: {
        PATH: process.env.PATH,
        NODE_ENV: "production",
        RELAY_HOST: "127.0.0.1",
        RELAY_PORT: String(port),
        NATS_URL: natsUrl(),
        TARSY_SUBJECT_PREFIX: prefix,
      },
    });
    try {
      const ready = await until(
        async () => {
          const res = await get(`http://127.0.0.1:${port}/ready`);
          return res?.status === 200 ? res : undefined;
        },
        { what: "relay /ready", retryErrors: true },
      );
      // The ops routes of every service (`@tarsy/metrics`), on the relay's own port.
      expect(JSON.parse(ready.body)).toMatchObject({
        status: "ready",
        checks: { nats: { status: "ok" } },
      });
    } finally {
      relay.child.kill("SIGTERM");
    }
    expect(await relay.exited, relay.output()).toBe(0);
  }, 240_000);
});

describe("the llm-service image layout", () => {
  it("finds its protos, answers the image's gRPC health check, then stops on SIGTERM", async () => {
    const out = await layout("@tarsy/llm-service");
    const dir = join(out, "llm-service");
    // A gRPC-only proxy: neither the bus nor the NATS client is in its image.
    expect(existsSync(join(out, "packages/metrics/src/index.ts"))).toBe(true);
    expect(existsSync(join(out, "packages/bus/src/index.ts"))).toBe(false);
    const store = readdirSync(join(out, "node_modules/.pnpm"));
    expect(store.filter((d) => d.startsWith("@nats-io"))).toEqual([]);
    copyFileSync(resolve(ROOT, "deploy/docker/grpc-health.mjs"), join(dir, "grpc-health.mjs"));
    const port = await freePort();
    // Nothing listens yet: the health check fails.
    const before = await run("node", ["grpc-health.mjs", `127.0.0.1:${port}`], { cwd: dir });
    expect(before.code).toBe(1);

    const service = start("node", ["--import", TSX_LOADER, "src/main.ts"], {
      cwd: dir,
      env: {
        PATH: process.env.PATH,
        NODE_ENV: "production",
        LLM_SERVICE_HOST: "127.0.0.1",
        LLM_SERVICE_PORT: String(port),
      },
    });
    try {
      await until(
        async () => {
          const check = await run("node", ["grpc-health.mjs", `127.0.0.1:${port}`], { cwd: dir });
          return check.code === 0 ? check : undefined;
        },
        { what: "grpc health SERVING", timeoutMs: 60_000, intervalMs: 200, retryErrors: true },
      );
    } finally {
      service.child.kill("SIGTERM");
    }
    expect(await service.exited, service.output()).toBe(0);
  }, 240_000);
});

/** A real llm-service (from the repository) for the runner's readiness check to reach. */
async function startLlmService(): Promise<{ env: Record<string, string>; stop: () => void }> {
  const port = await freePort();
  const llm = start("node", ["--import", TSX_LOADER, "src/main.ts"], {
    cwd: join(ROOT, "llm-service"),
    env: {
      PATH: process.env.PATH,
      LLM_SERVICE_HOST: "127.0.0.1",
      LLM_SERVICE_PORT: String(port),
      METRICS_PORT: "0",
    },
  });
  await until(async () => (/"msg":"service started"/.test(llm.output()) ? true : undefined), {
    what: "llm-service listening",
    retryErrors: true,
  });
  return {
    env: { LLM_SERVICE_ADDRESS: `127.0.0.1:${port}` },
    stop: () => llm.child.kill("SIGTERM"),
  };
}

describe.each([
  ["orchestrator", ["nats", "postgres"]],
  ["agent-runner", ["llm-service", "nats", "postgres"]],
  ["mcp-gateway", ["nats", "mcp_servers"]],
  ["notifier", ["nats", "postgres"]],
])("the %s image layout", (service, checks) => {
  it("serves /health, /ready and /metrics on its ops server, then stops on SIGTERM", async () => {
    const out = await layout(`@tarsy/${service}`);
    const store = readdirSync(join(out, "node_modules/.pnpm"));
    expect(store.some((d) => d.startsWith("prom-client@"))).toBe(true);
    const database = await createTestDatabase();
    const port = await freePort();
    const ops = `http://127.0.0.1:${port}`;
    const llm = service === "agent-runner" ? await startLlmService() : undefined;
    const process_ = start("node", ["--import", TSX_LOADER, "src/main.ts"], {
      cwd: join(out, `services/${service}`),
      env: {
        PATH: process.env.PATH,
        NODE_ENV: "production",
        METRICS_HOST: "127.0.0.1",
        METRICS_PORT: String(port),
        NATS_URL: natsUrl(),
        TARSY_SUBJECT_PREFIX: prefix,
        DATABASE_URL: database.url,
        // The demo configuration: its MCP servers (the demo cluster) start without a cluster.
        TARSY_CONFIG_DIR: resolve(ROOT, "deploy/demo"),
        TARSY_REPO_ROOT: ROOT,
        ...llm?.env,
      },
    });
    try {
      const ready = await until(
        async () => {
          const res = await get(`${ops}/ready`);
          return res?.status === 200 ? res : undefined;
        },
        { what: `${service} /ready`, timeoutMs: 90_000, retryErrors: true },
      );
      const report = JSON.parse(ready.body) as { status: string; checks: Record<string, unknown> };
      expect(report.status).toBe("ready");
      expect(Object.keys(report.checks).sort()).toEqual([...checks].sort());
      const health = await get(`${ops}/health`);
      expect(health?.status).toBe(200);
      // Liveness in the Go TARSy's shape: status, version and the process's checks.
      expect(JSON.parse(health?.body ?? "{}")).toMatchObject({
        status: "healthy",
        version: "0.1.0",
        checks: expect.any(Object),
      });
      const metrics = await get(`${ops}/metrics`);
      expect(metrics?.status).toBe(200);
      expect(metrics?.body).toMatch(/^# TYPE tarsy_\w+ (counter|gauge|histogram)$/m);
      expect(metrics?.body).toContain(`service="${service}"`);
    } finally {
      process_.child.kill("SIGTERM");
      llm?.stop();
    }
    expect(await process_.exited, process_.output()).toBe(0);
    await database.drop();
  }, 240_000);
});

describe("the migrate image layout", () => {
  it("runs `pnpm db:migrate` against an empty database", async () => {
    const out = await layout("@tarsy/db");
    expect(existsSync(join(out, "prisma/migrations"))).toBe(true);
    const database = await createTestDatabase({ migrated: false });
    try {
      // In the image pnpm and tsx are global; here they come from the workspace.
      const path = [resolve(ROOT, "node_modules/.bin"), process.env.PATH].join(delimiter);
      const result = await run("pnpm", ["db:migrate"], {
        cwd: out,
        env: { PATH: path, HOME: process.env.HOME, CI: "true", DATABASE_URL: database.url },
      });
      expect(result.code, result.output).toBe(0);
      const sql = postgres(database.url, { max: 1 });
      try {
        const applied = await sql<{ migration_name: string }[]>`
          SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL`;
        const expected = readdirSync(join(out, "prisma/migrations"), { withFileTypes: true })
          .filter((d) => d.isDirectory())
          .map((d) => d.name);
        expect(applied.map((r) => r.migration_name).sort()).toEqual(expected.sort());
        const [sessions] = await sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM information_schema.tables WHERE table_name = 'alert_sessions'`;
        expect(sessions?.n).toBe(1);
      } finally {
        await sql.end();
      }
    } finally {
      await database.drop();
    }
  }, 240_000);
});
