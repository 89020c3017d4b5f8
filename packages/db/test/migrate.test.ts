import { createHash } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  DEFAULT_MIGRATIONS_DIR,
  MigrationChecksumMismatchError,
  MigrationFailedError,
  migrate,
  readMigrations,
} from "../src/index.ts";
import { createTestDatabase, readCatalog, type TestDatabase, withSql } from "./support.ts";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function emptyDatabase(): Promise<TestDatabase> {
  const database = await createTestDatabase({ migrated: false });
  cleanups.push(() => database.drop());
  return database;
}

function copyMigrations(): string {
  const dir = mkdtempSync(join(tmpdir(), "tarsy-migrations-"));
  cpSync(DEFAULT_MIGRATIONS_DIR, dir, { recursive: true });
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

interface MigrationRow {
  id: string;
  checksum: string;
  migration_name: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
  applied_steps_count: number;
  logs: string | null;
}

const migrationRows = (url: string) =>
  withSql(url, (sql) => sql<MigrationRow[]>`SELECT * FROM _prisma_migrations ORDER BY started_at`);

describe("migrate", () => {
  it("creates the schema from an empty database, and a second run changes nothing", async () => {
    const database = await emptyDatabase();
    const names = readMigrations().map((m) => m.name);
    expect(names.length).toBeGreaterThan(0);

    const first = await migrate(database.url);
    expect(first.applied).toEqual(names);
    const catalog = await readCatalog(database.url);
    expect(catalog.tables).toEqual(
      expect.arrayContaining([
        "alert_sessions",
        "stages",
        "agent_executions",
        "timeline_events",
        "messages",
        "llm_interactions",
        "mcp_interactions",
        "chats",
        "chat_user_messages",
        "outbox_messages",
        "_prisma_migrations",
      ]),
    );

    const second = await migrate(database.url);
    expect(second.applied).toEqual([]);
    expect(second.alreadyApplied).toEqual(names);
    expect(await readCatalog(database.url)).toEqual(catalog);
    expect(await migrationRows(database.url)).toHaveLength(names.length);
  });

  it("keeps Prisma's _prisma_migrations bookkeeping", async () => {
    const database = await emptyDatabase();
    await migrate(database.url);
    const rows = await migrationRows(database.url);
    const files = readMigrations();
    expect(rows.map((r) => r.migration_name)).toEqual(files.map((f) => f.name));
    for (const [i, row] of rows.entries()) {
      const bytes = readFileSync(join(DEFAULT_MIGRATIONS_DIR, row.migration_name, "migration.sql"));
      expect(row.checksum).toBe(createHash("sha256").update(bytes).digest("hex"));
      expect(row.checksum).toBe(files[i]?.checksum);
      expect(row.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(row.finished_at).toBeInstanceOf(Date);
      expect(row.rolled_back_at).toBeNull();
      expect(row.applied_steps_count).toBe(1);
      expect(row.logs).toBeNull();
    }
  });

  it("is safe when several processes migrate the same database at once", async () => {
    const database = await emptyDatabase();
    const results = await Promise.all(Array.from({ length: 5 }, () => migrate(database.url)));
    const names = readMigrations().map((m) => m.name);
    // Every migration was applied by exactly one of the runs.
    expect(results.flatMap((r) => r.applied).sort()).toEqual([...names].sort());
    const rows = await migrationRows(database.url);
    expect(rows.map((r) => r.migration_name)).toEqual(names);
    expect(rows.every((r) => r.finished_at !== null)).toBe(true);
  });

  it("refuses to run when an applied migration's file changed", async () => {
    const database = await emptyDatabase();
    const dir = copyMigrations();
    await migrate(database.url, { migrationsDir: dir });
    const first = readMigrations(dir)[0];
    if (first === undefined) throw new Error("no migrations");
    const file = join(dir, first.name, "migration.sql");
    writeFileSync(file, `${readFileSync(file, "utf8")}\n-- edited after being applied\n`);
    mkdirSync(join(dir, "99990101000000_later"));
    writeFileSync(
      join(dir, "99990101000000_later", "migration.sql"),
      "CREATE TABLE later (id int);",
    );

    const error = await migrate(database.url, { migrationsDir: dir }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MigrationChecksumMismatchError);
    expect((error as MigrationChecksumMismatchError).code).toBe("migration_checksum_mismatch");
    expect((error as MigrationChecksumMismatchError).migrationName).toBe(first.name);
    // Nothing after the tampered migration ran.
    expect((await readCatalog(database.url)).tables).not.toContain("later");
  });

  it("rolls a failing migration back completely and retries it once fixed", async () => {
    const database = await emptyDatabase();
    const dir = copyMigrations();
    const bad = join(dir, "99990101000000_bad");
    mkdirSync(bad);
    writeFileSync(
      join(bad, "migration.sql"),
      "CREATE TABLE half_done (id int);\nALTER TABLE no_such_table ADD COLUMN x int;\n",
    );
    const error = await migrate(database.url, { migrationsDir: dir }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MigrationFailedError);
    expect((error as MigrationFailedError).migrationName).toBe("99990101000000_bad");
    const catalog = await readCatalog(database.url);
    expect(catalog.tables).toContain("alert_sessions");
    expect(catalog.tables).not.toContain("half_done");
    const failed = (await migrationRows(database.url)).filter(
      (r) => r.migration_name === "99990101000000_bad",
    );
    expect(failed).toHaveLength(1);
    expect(failed[0]?.rolled_back_at).toBeInstanceOf(Date);
    expect(failed[0]?.logs).toMatch(/no_such_table/);

    writeFileSync(join(bad, "migration.sql"), "CREATE TABLE half_done (id int);\n");
    const retry = await migrate(database.url, { migrationsDir: dir });
    expect(retry.applied).toEqual(["99990101000000_bad"]);
    expect((await readCatalog(database.url)).tables).toContain("half_done");
  });
});
