/**
 * Offline SQL generation with Prisma 6 (the only Prisma whose schema engine runs here, as
 * WASM). Prisma 7 schemas carry no datasource `url`, which Prisma 6 requires, so the
 * schemas are copied with one injected. Used by new-migration.ts and the agreement test.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const repoRoot = resolve(packageDir, "../..");
export const schemaPath = join(repoRoot, "prisma/schema.prisma");
export const migrationsDir = join(repoRoot, "prisma/migrations");
/** The schema as of the newest migration; the next migration is the diff from it. */
export const snapshotPath = join(repoRoot, "prisma/snapshot/schema.prisma");
const prisma6Cli = join(packageDir, "node_modules/prisma6/build/index.js");

function withUrl(schema: string): string {
  return schema.replace(
    /(datasource\s+\w+\s*\{[^}]*provider\s*=\s*"postgresql")/,
    `$1\n  url = env("PRISMA6_DIFF_URL")`,
  );
}

/** SQL that turns the `from` schema (null: an empty database) into the `to` schema. */
export async function diffSchemas(
  from: string | null,
  to: string,
  databaseUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
): Promise<string> {
  // Inside node_modules so the config file resolves prisma6 and the pg adapter.
  const dir = await mkdtemp(join(packageDir, "node_modules/.tarsy-prisma6-"));
  try {
    const toFile = join(dir, "to.prisma");
    await writeFile(toFile, withUrl(await readFile(to, "utf8")));
    let fromArgs = ["--from-empty"];
    if (from !== null) {
      const fromFile = join(dir, "from.prisma");
      await writeFile(fromFile, withUrl(await readFile(from, "utf8")));
      fromArgs = ["--from-schema-datamodel", fromFile];
    }
    const config = join(dir, "prisma.config.ts");
    await writeFile(
      config,
      [
        'import { PrismaPg } from "@prisma/adapter-pg";',
        'import { defineConfig } from "prisma6/config";',
        "export default defineConfig({",
        "  experimental: { adapter: true },",
        '  engine: "js",',
        `  schema: ${JSON.stringify(toFile)},`,
        "  // Prisma 6's JS engine connects once; a schema-to-schema diff reads nothing.",
        `  adapter: async () => new PrismaPg({ connectionString: ${JSON.stringify(databaseUrl)}, idleTimeoutMillis: 50 }),`,
        "});",
        "",
      ].join("\n"),
    );
    const dummy = join(dir, "no-engine");
    await writeFile(dummy, "");
    const { stdout } = await run(
      process.execPath,
      [
        prisma6Cli,
        "migrate",
        "diff",
        "--config",
        config,
        ...fromArgs,
        "--to-schema-datamodel",
        toFile,
        "--script",
      ],
      {
        cwd: dir,
        maxBuffer: 64 * 1024 * 1024,
        env: {
          ...process.env,
          PRISMA6_DIFF_URL: "postgresql://unused@127.0.0.1:1/unused",
          PRISMA_QUERY_ENGINE_LIBRARY: dummy,
          PRISMA_SCHEMA_ENGINE_BINARY: dummy,
          CHECKPOINT_DISABLE: "1",
          PRISMA_HIDE_UPDATE_MESSAGE: "1",
        },
      },
    );
    return stdout;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** True when the SQL does nothing (Prisma prints only a comment for an empty diff). */
export function isEmptyDiff(sql: string): boolean {
  return (
    sql
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "" && !line.startsWith("--")).length === 0
  );
}
