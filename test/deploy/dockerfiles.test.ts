/**
 * The images' build files, checked statically (no Docker engine runs here): base image,
 * stages, the user, ports, entrypoint and health checks of every Dockerfile in
 * deploy/docker, the build context's .dockerignore, and deploy/compose.yaml wiring them.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
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

/** Image → the workspace folder it runs, and the port variables of its env.ts. */
const IMAGES = {
  "ingest-api": { dir: "services/ingest-api", port: "PORT" },
  "stream-relay": { dir: "services/stream-relay", port: "RELAY_PORT" },
  "llm-service": { dir: "llm-service", port: "LLM_SERVICE_PORT" },
  orchestrator: { dir: "services/orchestrator", port: undefined },
  "agent-runner": { dir: "services/agent-runner", port: undefined },
  "mcp-gateway": { dir: "services/mcp-gateway", port: undefined },
} as const;

/** The default of a port variable in a service's env.ts. */
function defaultPort(dir: string, variable: string): number {
  const source = readFileSync(resolve(ROOT, dir, "src/env.ts"), "utf8");
  const match = new RegExp(`${variable}: z[^\\n]*\\.default\\(([0-9_]+)\\)`).exec(source);
  if (!match?.[1]) throw new Error(`${dir}: no default for ${variable}`);
  return Number(match[1].replaceAll("_", ""));
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

  it("exposes the port its env.ts listens on, with a health check, or neither", () => {
    if (name === "migrate") {
      expect(one("EXPOSE")).toEqual([]);
      return;
    }
    if (image?.port) {
      const port = defaultPort(image.dir, image.port);
      expect(one("EXPOSE")).toEqual([String(port)]);
      // The image sets the variable to the exposed port.
      expect(one("ENV").join(" ")).toContain(`${image.port}=${port}`);
      expect(one("HEALTHCHECK")).toHaveLength(1);
      expect(one("HEALTHCHECK")[0]).toContain(image.port);
    } else {
      expect(text).not.toMatch(/^\s*[A-Z_]*PORT:/m);
      expect(readFileSync(resolve(ROOT, image?.dir ?? "", "src/env.ts"), "utf8")).not.toMatch(
        /^\s+[A-Z_]*PORT:/m,
      );
      expect(one("EXPOSE")).toEqual([]);
      expect(one("HEALTHCHECK")).toEqual([]);
    }
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
        healthcheck?: object;
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
    for (const name of ["ingest-api", "orchestrator", "agent-runner"]) {
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
  });

  it("gives every service an environment its own env schema accepts", async () => {
    for (const [name, image] of Object.entries(IMAGES)) {
      const { EnvSchema } = (await import(resolve(ROOT, image.dir, "src/env.ts"))) as {
        EnvSchema: { safeParse(v: unknown): { success: boolean; error?: unknown } };
      };
      const env = Object.fromEntries(
        Object.entries(services[name]?.environment ?? {}).map(([k, v]) => [
          k,
          String(v).replace(/\$\{[A-Z_]+:-([^}]*)\}/g, "$1"),
        ]),
      );
      const result = EnvSchema.safeParse(env);
      expect(result.success, `${name}: ${String(result.error)}`).toBe(true);
    }
  });
});
