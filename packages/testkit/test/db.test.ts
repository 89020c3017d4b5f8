import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_MIGRATIONS_DIR } from "@tarsy/db";
import { countStoredRows } from "@tarsy/db/testing";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestDatabase,
  databaseUrl,
  dbTest,
  migrationsHash,
  type TestDatabase,
} from "../src/index.ts";

async function query<T extends object>(url: string, text: string): Promise<T[]> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    return (await sql.unsafe(text)) as unknown as T[];
  } finally {
    await sql.end({ timeout: 5 });
  }
}

const databaseExists = async (name: string) =>
  (
    await query<{ n: number }>(
      databaseUrl(),
      `SELECT 1 AS n FROM pg_database WHERE datname = '${name}'`,
    )
  ).length === 1;

// Named as a killed run would have left them: one 7 hours old, one 1 hour old.
const leftover = `tarsy_t_${(Date.now() - 7 * 3600_000).toString(36)}_leftover`;
const recent = `tarsy_t_${(Date.now() - 3600_000).toString(36)}_recent`;
beforeAll(async () => {
  // Before this file's first createTestDatabase, which sweeps leftovers once per process.
  await query(databaseUrl(), `CREATE DATABASE ${leftover}`);
  await query(databaseUrl(), `CREATE DATABASE ${recent}`);
});
afterAll(async () => {
  await query(databaseUrl(), `DROP DATABASE IF EXISTS ${leftover}`);
  await query(databaseUrl(), `DROP DATABASE IF EXISTS ${recent}`);
});

describe("test databases", () => {
  it("removes databases a killed run left behind hours ago, and only those", async () => {
    const database = await createTestDatabase();
    await database.drop();
    expect(await databaseExists(leftover)).toBe(false);
    expect(await databaseExists(recent)).toBe(true);
  });

  it("gives parallel callers migrated databases of their own, gone after drop", async () => {
    const databases: TestDatabase[] = await Promise.all(
      Array.from({ length: 6 }, () => createTestDatabase()),
    );
    try {
      expect(new Set(databases.map((d) => d.name)).size).toBe(6);
      // Writes in one are invisible in the others.
      await query(
        databases[0]!.url,
        "INSERT INTO alert_sessions (alert_data, alert_type, chain_id) VALUES ('x', 'k', 'c')",
      );
      const counts = await Promise.all(
        databases.map(
          async (d) =>
            (await query<{ n: string }>(d.url, "SELECT count(*) AS n FROM alert_sessions"))[0]?.n,
        ),
      );
      expect(counts).toEqual(["1", "0", "0", "0", "0", "0"]);
      const migrations = await query<{ n: string }>(
        databases[1]!.url,
        "SELECT count(*) AS n FROM _prisma_migrations WHERE finished_at IS NOT NULL",
      );
      expect(Number(migrations[0]?.n)).toBeGreaterThan(0);
    } finally {
      await Promise.all(databases.map((d) => d.drop()));
    }
    for (const d of databases) expect(await databaseExists(d.name)).toBe(false);
  });

  it("builds one template per set of migrations", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tarsy-tpl-"));
    try {
      cpSync(DEFAULT_MIGRATIONS_DIR, dir, { recursive: true });
      const extra = join(dir, "99990101000000_extra");
      mkdirSync(extra);
      writeFileSync(join(extra, "migration.sql"), "CREATE TABLE extra_marker (id int);\n");
      const hash = migrationsHash(dir);
      expect(hash).not.toBe(migrationsHash());
      const [a, b] = await Promise.all([
        createTestDatabase({ migrationsDir: dir }),
        createTestDatabase({ migrationsDir: dir }),
      ]);
      const plain = await createTestDatabase();
      try {
        expect(await databaseExists(`tarsy_tpl_${hash}`)).toBe(true);
        const has = async (d: TestDatabase) =>
          (await query(d.url, "SELECT 1 FROM pg_tables WHERE tablename = 'extra_marker'")).length;
        expect([await has(a), await has(b), await has(plain)]).toEqual([1, 1, 0]);
      } finally {
        await Promise.all([a.drop(), b.drop(), plain.drop()]);
        await query(databaseUrl(), `DROP DATABASE IF EXISTS tarsy_tpl_${hash} WITH (FORCE)`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("can give an empty database for migration tests", async () => {
    const empty = await createTestDatabase({ migrated: false });
    try {
      expect(await query(empty.url, "SELECT 1 FROM pg_tables WHERE schemaname = 'public'")).toEqual(
        [],
      );
    } finally {
      await empty.drop();
    }
  });
});

let seen: string | undefined;
describe("dbTest fixture", () => {
  dbTest("provides a database and a connected client", async ({ db, database }) => {
    seen = database.name;
    expect(await databaseExists(database.name)).toBe(true);
    expect((await countStoredRows(db.prisma)).sessions).toBe(0);
  });

  it("dropped the fixture's database after the test", async () => {
    expect(seen).toBeDefined();
    expect(await databaseExists(seen!)).toBe(false);
  });
});
