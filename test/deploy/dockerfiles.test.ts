/**
 * The images' build files, checked statically (no Docker engine runs here): base image,
 * stages, the user, ports, entrypoint and health checks of every Dockerfile in
 * deploy/docker, the build context's .dockerignore, and deploy/compose.yaml wiring them.
 * The HTTP health check commands are run for real against a loopback server.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, run } from "./support/processes.ts";
import { parseYaml, ROOT } from "./support/yaml.ts";

interface Instruction {
  op: string;
  args: string;
  stage: number;
}

/** Dockerfile instructions with continuation lines joined, each tagged with its stage. */
function parseDockerfile(text: string): Instruction[] {
  const joined = text.replace(/\\\n/g, " ");
  let stage = -1;
  const out: Instruction[] = [];
  for (const line of joined.split("\n")) {
    const trimmed = line.trim();
    if (!trimmed || trimmed.startsWith("#")) continue;
    const [op = "", ...rest] = trimmed.split(/\s+/);
    if (op.toUpperCase() === "FROM") stage += 1;
    out.push({ op: op.toUpperCase(), args: rest.join(" "), stage });
  }
  return out;
}

const DOCKER = resolve(ROOT, "deploy/docker");
const rootPackage = JSON.parse(readFileSync(resolve(ROOT, "package.json"), "utf8")) as {
  packageManager: string;
  devDependencies: Record<string, string>;
  scripts: Record<string, string>;
};

/**
 * The ops server every service without a public port (and llm-service) runs: GET /metrics,
 * /health (liveness) and /ready (readiness) on METRICS_PORT, 9464 by default (the contract
 * docs/operations.md documents; the services' env.ts may declare it through a shared shape).
 */
const METRICS = { variable: "METRICS_PORT", port: 9464 } as const;

interface HealthCheck {
  /** The port variable the check reads. */
  variable: string;
  /** An HTTP path, or "grpc" for grpc-health.mjs. */
  path: string;
}
interface Image {
  dir: string;
  /** The port variables of the ports it listens on. */
  ports: readonly string[];
  health: HealthCheck;
}
/**
 * Image → the workspace folder it runs, the port variables it listens on and what its
 * HEALTHCHECK asks. ingest-api's /health and stream-relay's /ready are their readiness
 * endpoints (as before); the ops servers' images ask /health, the liveness endpoint, so a
 * runtime that replaces unhealthy containers never does it for an outage of NATS or
 * Postgres; llm-service asks gRPC health, what compose's dependants wait for.
 */
const IMAGES: Record<string, Image> = {
  "ingest-api": {
    dir: "services/ingest-api",
    ports: ["PORT"],
    health: { variable: "PORT", path: "/health" },
  },
  "stream-relay": {
    dir: "services/stream-relay",
    ports: ["RELAY_PORT"],
    health: { variable: "RELAY_PORT", path: "/ready" },
  },
  "llm-service": {
    dir: "llm-service",
    ports: ["LLM_SERVICE_PORT", METRICS.variable],
    health: { variable: "LLM_SERVICE_PORT", path: "grpc" },
  },
  orchestrator: {
    dir: "services/orchestrator",
    ports: [METRICS.variable],
    health: { variable: METRICS.variable, path: "/health" },
  },
  "agent-runner": {
    dir: "services/agent-runner",
    ports: [METRICS.variable],
    health: { variable: METRICS.variable, path: "/health" },
  },
  "mcp-gateway": {
    dir: "services/mcp-gateway",
    ports: [METRICS.variable],
    health: { variable: METRICS.variable, path: "/health" },
  },
  notifier: {
    dir: "services/notifier",
    ports: [METRICS.variable],
    health: { variable: METRICS.variable, path: "/health" },
  },
};

/**
 * The default of a port variable in a service's env.ts. METRICS_PORT may come from a shared
 * env shape instead: then the contract's default applies; where env.ts spells it, it must
 * agree with the contract.
 */
function defaultPort(dir: string, variable: string): number {
  const source = readFileSync(resolve(ROOT, dir, "src/env.ts"), "utf8");
  const match = new RegExp(`${variable}: z[^\\n]*\\.default\\(([0-9_]+)\\)`).exec(source);
  if (variable === METRICS.variable) {
    if (match?.[1]) expect(Number(match[1].replaceAll("_", "")), dir).toBe(METRICS.port);
    return METRICS.port;
  }
  if (!match?.[1]) throw new Error(`${dir}: no default for ${variable}`);
  return Number(match[1].replaceAll("_", ""));
}

/** The exec-form argv of a HEALTHCHECK or compose `test` (["CMD", ...] or CMD [...]). */
function healthArgv(check: string | readonly string[]): string[] {
  if (Array.isArray(check)) {
    expect(check[0]).toBe("CMD");
    return check.slice(1);
  }
  const cmd = /(?:^|\s)CMD\s+(.*)$/.exec(check as string)?.[1] ?? "";
  return cmd.startsWith("[") ? (JSON.parse(cmd) as string[]) : ["sh", "-c", cmd];
}

/**
 * A loopback HTTP server standing in for a service: `status` answers `path`, every other
 * path is 404, so a check passes only when it asks the right endpoint.
 */
const stub = { path: "/", status: 200 };
let server: Server;
let stubPort = 0;
beforeAll(async () => {
  server = createServer((req, res) => {
    res.statusCode = req.url === stub.path ? stub.status : 404;
    res.end();
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  stubPort = (server.address() as { port: number }).port;
});
afterAll(() => new Promise<void>((ok) => server.close(() => ok())));

/** Runs a health check command with `variable` pointing at the stub: its exit code. */
async function runCheck(argv: string[], variable: string, port: number): Promise<number | string> {
  const [command = "", ...args] = argv;
  const result = await run(command, args, {
    env: { PATH: process.env.PATH, [variable]: String(port) },
  });
  return result.code;
}

/** The health check passes exactly when `path` answers 200 on the port in `variable`. */
async function expectChecks(argv: string[], variable: string, path: string) {
  Object.assign(stub, { path, status: 200 });
  expect(await runCheck(argv, variable, stubPort), `${path} answers 200`).toBe(0);
  Object.assign(stub, { path, status: 503 });
  expect(await runCheck(argv, variable, stubPort), `${path} answers 503`).toBe(1);
  Object.assign(stub, { path: "/elsewhere", status: 200 });
  expect(await runCheck(argv, variable, stubPort), "only another path answers").toBe(1);
  expect(await runCheck(argv, variable, await freePort()), "nothing listens").toBe(1);
}

it("has a Dockerfile for every service, llm-service and the migrations, and nothing else", () => {
  const files = readdirSync(DOCKER).filter((f) => f.endsWith(".Dockerfile"));
  expect(files.sort()).toEqual(
    [...Object.keys(IMAGES), "migrate"].map((n) => `${n}.Dockerfile`).sort(),
  );
  // Every deployable folder of the workspace has its image.
  const services = readdirSync(resolve(ROOT, "services")).filter((d) =>
    existsSync(resolve(ROOT, "services", d, "src/main.ts")),
  );
  for (const s of services) expect(Object.keys(IMAGES)).toContain(s);
});

describe.each([...Object.keys(IMAGES), "migrate"])("deploy/docker/%s.Dockerfile", (name) => {
  const text = readFileSync(resolve(DOCKER, `${name}.Dockerfile`), "utf8");
  const all = parseDockerfile(text);
  const last = Math.max(...all.map((i) => i.stage));
  const final = all.filter((i) => i.stage === last);
  const one = (op: string) => final.filter((i) => i.op === op).map((i) => i.args);
  const image = IMAGES[name as keyof typeof IMAGES];

  it("builds in stages from the Node 20 LTS slim image", () => {
    const arg = all.find((i) => i.op === "ARG" && i.args.startsWith("NODE_IMAGE="));
    expect(arg?.args).toBe("NODE_IMAGE=node:20-bookworm-slim");
    const froms = all.filter((i) => i.op === "FROM").map((i) => i.args);
    const base = "$" + "{NODE_IMAGE}"; // the Dockerfile's ARG, literally
    expect(froms).toEqual([`${base} AS build`, `${base} AS runtime`]);
    // The runtime copies only the production layout out of the build stage.
    expect(one("COPY")).toContain("--from=build /out /app");
    expect(text).not.toMatch(/:latest\b/);
  });

  it("installs with the workspace's pinned tools and only production dependencies", () => {
    const buildRuns = all.filter((i) => i.stage === 0 && i.op === "RUN").map((i) => i.args);
    expect(buildRuns).toContain(`npm install -g ${rootPackage.packageManager}`);
    expect(buildRuns).toContain("pnpm install --offline --frozen-lockfile && pnpm db:generate");
    const pkg =
      name === "migrate"
        ? "@tarsy/db"
        : (
            JSON.parse(readFileSync(resolve(ROOT, image?.dir ?? "", "package.json"), "utf8")) as {
              name: string;
            }
          ).name;
    expect(buildRuns).toContain(`sh deploy/docker/install-prod.sh ${pkg} /out`);
    const runtimeRun = one("RUN").join(" ");
    expect(runtimeRun).toContain(`tsx@${rootPackage.devDependencies.tsx}`);
    expect(runtimeRun).toMatch(/useradd --uid 10001/);
  });

  it("runs as the non-root user 10001", () => {
    expect(one("USER")).toEqual(["10001:10001"]);
  });

  it("exposes every port it listens on, with its variable set to it", () => {
    const exposed = one("EXPOSE").flatMap((a) => a.split(/\s+/));
    if (!image) {
      expect(exposed).toEqual([]);
      return;
    }
    const env = one("ENV").join(" ");
    const ports = image.ports.map((variable) => {
      const port = defaultPort(image.dir, variable);
      // The image sets the variable to the exposed port, which its health check reads.
      expect(env, variable).toMatch(new RegExp(`(^|\\s)${variable}=${port}(\\s|$)`));
      return String(port);
    });
    expect(exposed).toEqual(ports);
  });

  it("has a HEALTHCHECK if and only if it exposes a port", () => {
    const exposes = one("EXPOSE").length > 0;
    expect(one("HEALTHCHECK"), name).toHaveLength(exposes ? 1 : 0);
    // The header comment describes the image as it is.
    const header = text
      .split("\n")
      .filter((l) => l.startsWith("#"))
      .slice(0, 4)
      .join("\n");
    if (exposes) expect(header).not.toMatch(/no listening port|no HEALTHCHECK/);
  });

  it("health-checks its endpoint on an exposed port: exit 0 on 200, 1 otherwise", async () => {
    const [check = ""] = one("HEALTHCHECK");
    if (!image) {
      expect(one("HEALTHCHECK")).toEqual([]);
      return;
    }
    const { health } = image;
    expect(check).toMatch(/--start-period=\d+s/);
    expect(image.ports).toContain(health.variable);
    if (health.path === "grpc") {
      // grpc-health.mjs itself is run against llm-service in image-layout.test.ts.
      expect(check).toContain(`grpc-health.mjs "127.0.0.1:\${${health.variable}}"`);
      expect(one("COPY")).toContain(
        `deploy/docker/grpc-health.mjs /app/${image.dir}/grpc-health.mjs`,
      );
      return;
    }
    await expectChecks(healthArgv(check), health.variable, health.path);
  });

  it("starts the service's main.ts under tini, with node itself as the signalled process", () => {
    const [entrypoint] = one("ENTRYPOINT");
    const argv = JSON.parse(entrypoint ?? "null") as string[];
    const [workdir] = one("WORKDIR");
    if (name === "migrate") {
      expect(argv).toEqual(["/usr/bin/tini", "--", "pnpm", "db:migrate"]);
      expect(rootPackage.scripts["db:migrate"]).toBeDefined();
      expect(workdir).toBe("/app");
      return;
    }
    expect(argv).toEqual([
      "/usr/bin/tini",
      "--",
      "node",
      "--import",
      "file:///usr/local/lib/node_modules/tsx/dist/loader.mjs",
      "src/main.ts",
    ]);
    expect(workdir).toBe(`/app/${image?.dir}`);
    expect(existsSync(resolve(ROOT, image?.dir ?? "", "src/main.ts"))).toBe(true);
  });
});

it("builds the dashboard into ingest-api's image and serves it from there", () => {
  const text = readFileSync(resolve(DOCKER, "ingest-api.Dockerfile"), "utf8");
  expect(text).toContain("RUN pnpm --filter @tarsy/dashboard run build");
  expect(text).toContain("COPY --from=build /src/packages/dashboard/dist /app/dashboard");
  expect(text).toMatch(/ENV [^\n]*DASHBOARD_DIR=\/app\/dashboard/);
  expect(readFileSync(resolve(ROOT, "services/ingest-api/src/env.ts"), "utf8")).toContain(
    "DASHBOARD_DIR",
  );
  const dashboard = resolve(ROOT, "packages/dashboard/package.json");
  if (existsSync(dashboard)) {
    const pkg = JSON.parse(readFileSync(dashboard, "utf8")) as {
      name: string;
      scripts: Record<string, string>;
    };
    expect(pkg.name).toBe("@tarsy/dashboard");
    expect(pkg.scripts.build).toBeDefined();
  }
});

it("keeps dependencies, secrets and local config out of the build context", () => {
  const ignored = readFileSync(resolve(ROOT, ".dockerignore"), "utf8").split("\n");
  for (const entry of ["**/node_modules", ".git", ".env", "**/.env", "deploy/config/tarsy.yaml"]) {
    expect(ignored).toContain(entry);
  }
});

describe("deploy/compose.yaml", () => {
  const compose = parseYaml(
    readFileSync(resolve(ROOT, "deploy/compose.yaml"), "utf8"),
    "compose.yaml",
  ) as {
    services: Record<
      string,
      {
        build?: { context: string; dockerfile: string };
        image?: string;
        command?: string[];
        environment?: Record<string, string>;
        ports?: string[];
        healthcheck?: { test: string[] | string };
        depends_on?: Record<string, { condition: string }>;
        volumes?: string[];
        restart?: string;
      }
    >;
  };
  const services = compose.services;

  it("builds every image from the repository root and runs Postgres, JetStream NATS and the migration", () => {
    for (const name of [...Object.keys(IMAGES), "migrate"]) {
      expect(services[name]?.build, name).toEqual({
        context: "..",
        dockerfile: `deploy/docker/${name}.Dockerfile`,
      });
    }
    expect(services.nats?.command).toContain("-js");
    expect(services.postgres?.healthcheck).toBeDefined();
    expect(services.nats?.healthcheck).toBeDefined();
    expect(services.migrate?.restart).toBe("no");
    expect(services.migrate?.depends_on?.postgres?.condition).toBe("service_healthy");
  });

  it("starts database users after the migration and publishes the exposed ports", () => {
    for (const name of [
      "ingest-api",
      "orchestrator",
      "agent-runner",
      "stream-relay",
      "mcp-gateway",
      "notifier",
    ]) {
      expect(services[name]?.depends_on?.migrate?.condition, name).toBe(
        "service_completed_successfully",
      );
      expect(services[name]?.environment?.DATABASE_URL, name).toMatch(/@postgres:5432\//);
    }
    expect(services["ingest-api"]?.ports).toEqual(["8080:8080"]);
    expect(services["stream-relay"]?.ports).toEqual(["8081:8081"]);
    // Config files mounted where TARSY_CONFIG_DIR of the images points.
    expect(services.orchestrator?.volumes).toContain("./config:/etc/tarsy:ro");
    // Provider keys reach llm-service only.
    for (const [name, svc] of Object.entries(services)) {
      const keys = Object.keys(svc.environment ?? {}).filter((k) => k.endsWith("_API_KEY"));
      expect(keys.length > 0, name).toBe(name === "llm-service");
    }
    // The Slack bot token reaches the notifier only.
    for (const [name, svc] of Object.entries(services)) {
      expect("SLACK_BOT_TOKEN" in (svc.environment ?? {}), name).toBe(name === "notifier");
    }
    // The user-token key reaches the service that seals users' tokens and the one that opens
    // them, from the same shell variable; no other.
    for (const [name, svc] of Object.entries(services)) {
      const key = svc.environment?.TARSY_TOKEN_KEY;
      expect(key, name).toBe(
        ["ingest-api", "mcp-gateway"].includes(name) ? `\${TARSY_TOKEN_KEY:-}` : undefined,
      );
    }
  });

  it("gives every service an environment its own env schema accepts", async () => {
    for (const [name, image] of Object.entries(IMAGES)) {
      const { EnvSchema } = (await import(resolve(ROOT, image.dir, "src/env.ts"))) as {
        EnvSchema: {
          safeParse(v: unknown): {
            success: boolean;
            data?: Record<string, unknown>;
            error?: unknown;
          };
        };
      };
      const env = Object.fromEntries(
        Object.entries(services[name]?.environment ?? {}).map(([k, v]) => [
          k,
          String(v).replace(/\$\{[A-Z_]+:-([^}]*)\}/g, "$1"),
        ]),
      );
      const result = EnvSchema.safeParse(env);
      expect(result.success, `${name}: ${String(result.error)}`).toBe(true);
      // Variables left unset in the shell arrive empty: the same as unset.
      if ("TARSY_TOKEN_KEY" in env) {
        expect(env.TARSY_TOKEN_KEY, name).toBe("");
        expect(result.data?.TARSY_TOKEN_KEY, name).toBeUndefined();
      }
    }
  });

  /** What a compose service's health check asks: its own, or its image's HEALTHCHECK. */
  const imageHealthcheck = (name: string) =>
    existsSync(resolve(DOCKER, `${name}.Dockerfile`)) &&
    /^HEALTHCHECK\s/m.test(readFileSync(resolve(DOCKER, `${name}.Dockerfile`), "utf8"));

  it("waits only for dependencies that have a health check, and for llm-service where it is called", () => {
    for (const [name, svc] of Object.entries(services)) {
      for (const [dep, { condition }] of Object.entries(svc.depends_on ?? {})) {
        expect(services[dep], `${name} depends on ${dep}`).toBeDefined();
        if (condition !== "service_healthy") continue;
        const checked = services[dep]?.healthcheck !== undefined || imageHealthcheck(dep);
        expect(checked, `${name} waits for ${dep} to be healthy`).toBe(true);
      }
    }
    // Every gRPC client of llm-service starts once it is SERVING.
    for (const name of ["ingest-api", "orchestrator", "agent-runner"]) {
      expect(services[name]?.depends_on?.["llm-service"]?.condition, name).toBe("service_healthy");
    }
    // mcp-gateway's readiness hangs on external MCP servers: nothing may wait for it.
    for (const [name, svc] of Object.entries(services)) {
      expect(svc.depends_on?.["mcp-gateway"], name).toBeUndefined();
    }
  });

  it.each(["orchestrator", "agent-runner", "mcp-gateway", "notifier"])(
    "health-checks %s's readiness on the ops port its image exposes",
    async (name) => {
      const svc = services[name];
      expect(svc?.environment?.[METRICS.variable]).toBe(String(METRICS.port));
      expect(IMAGES[name]?.ports).toContain(METRICS.variable);
      const check = svc?.healthcheck?.test;
      expect(check, `${name} healthcheck`).toBeDefined();
      await expectChecks(healthArgv(check ?? []), METRICS.variable, "/ready");
    },
  );
});
