import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeNextMigration } from "../scripts/next-migration.ts";
import { repoRoot } from "../scripts/prisma6.ts";
import { DEFAULT_MIGRATIONS_DIR, migrate } from "../src/index.ts";
import { createTestDatabase, readCatalog, type TestDatabase } from "./support.ts";

let work: string;
const dbs: TestDatabase[] = [];
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "tarsy-next-migration-"));
  cpSync(DEFAULT_MIGRATIONS_DIR, join(work, "migrations"), { recursive: true });
  cpSync(join(repoRoot, "prisma/snapshot/schema.prisma"), join(work, "snapshot.prisma"));
  cpSync(join(repoRoot, "prisma/schema.prisma"), join(work, "schema.prisma"));
});
afterAll(async () => {
  rmSync(work, { recursive: true, force: true });
  await Promise.all(dbs.map((d) => d.drop()));
});

describe("migration:new", () => {
  it("writes nothing while the schema is unchanged", async () => {
    const options = {
      name: "nothing",
      schemaPath: join(work, "schema.prisma"),
      snapshotPath: join(work, "snapshot.prisma"),
      migrationsDir: join(work, "migrations"),
    };
    expect(await writeNextMigration(options)).toBeNull();
  }, 60_000);

  it("turns a schema change into the next migration that brings a database up to date", async () => {
    const schemaFile = join(work, "schema.prisma");
    writeFileSync(
      schemaFile,
      readFileSync(schemaFile, "utf8").replace(
        "  author                String?\n",
        '  author                String?\n  severity              String?       @default("warning")\n',
      ),
    );
    const database = await createTestDatabase();
    dbs.push(database);
    const folder = await writeNextMigration({
      name: "add_severity",
      schemaPath: schemaFile,
      snapshotPath: join(work, "snapshot.prisma"),
      migrationsDir: join(work, "migrations"),
      now: new Date("2099-01-02T03:04:05Z"),
    });
    expect(folder).toBe(join(work, "migrations", "20990102030405_add_severity"));
    const sql = readFileSync(join(folder!, "migration.sql"), "utf8");
    expect(sql).toMatch(
      /ALTER TABLE "alert_sessions" ADD COLUMN\s+"severity" TEXT DEFAULT 'warning'/,
    );
    expect(readFileSync(join(work, "snapshot.prisma"), "utf8")).toBe(
      readFileSync(schemaFile, "utf8"),
    );
    expect(readdirSync(join(work, "migrations"))).toContain("20990102030405_add_severity");

    // A database migrated with the committed migrations catches up with the new one only.
    const result = await migrate(database.url, { migrationsDir: join(work, "migrations") });
    expect(result.applied).toEqual(["20990102030405_add_severity"]);
    expect((await readCatalog(database.url)).columns).toContainEqual(
      expect.stringMatching(
        /^alert_sessions \| severity \| text \| text \| YES \| 'warning'::text/,
      ),
    );
  }, 120_000);
});
