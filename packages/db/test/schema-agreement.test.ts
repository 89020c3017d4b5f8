/**
 * The committed migrations and prisma/schema.prisma describe the same database:
 * the snapshot the next migration diffs from equals the schema, and a database built by the
 * migrations matches, object for object, one built from Prisma 6's SQL for the schema alone
 * (besides the named objects of the migrations' `-- tarsy:custom` sections).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  ExecutionKindSchema,
  ExecutionStatusSchema,
  LLMInteractionTypeSchema,
  MCPInteractionTypeSchema,
  MessageRoleSchema,
  ParallelTypeSchema,
  SessionStatusSchema,
  SuccessPolicySchema,
  TimelineEventStatusSchema,
  TimelineEventTypeSchema,
} from "@tarsy/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { diffSchemas, isEmptyDiff, schemaPath, snapshotPath } from "../scripts/prisma6.ts";
import { DEFAULT_MIGRATIONS_DIR, readMigrations } from "../src/index.ts";
import {
  type Catalog,
  createTestDatabase,
  readCatalog,
  type TestDatabase,
  withSql,
} from "./support.ts";

/** Names of the indexes created in the custom sections of the migrations. */
function customIndexNames(): Set<string> {
  const names = new Set<string>();
  for (const migration of readMigrations()) {
    const custom = migration.sql.split(/^-- tarsy:custom$/m)[1] ?? "";
    for (const match of custom.matchAll(/CREATE (?:UNIQUE )?INDEX "([^"]+)"/g)) {
      if (match[1] !== undefined) names.add(match[1]);
    }
  }
  return names;
}

const dbs: TestDatabase[] = [];
let fromMigrations: Catalog;
let fromSchema: Catalog;

beforeAll(async () => {
  const [migrated, empty] = await Promise.all([
    createTestDatabase(),
    createTestDatabase({ migrated: false }),
  ]);
  dbs.push(migrated, empty);
  const sql = await diffSchemas(null, schemaPath);
  await withSql(empty.url, (conn) => conn.unsafe(sql).simple());
  [fromMigrations, fromSchema] = await Promise.all([
    readCatalog(migrated.url),
    readCatalog(empty.url),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all(dbs.map((db) => db.drop()));
});

describe("schema.prisma and the migrations agree", () => {
  it("has no schema change waiting for a migration", async () => {
    expect(readFileSync(snapshotPath, "utf8")).toBe(readFileSync(schemaPath, "utf8"));
    expect(isEmptyDiff(await diffSchemas(snapshotPath, schemaPath))).toBe(true);
  }, 60_000);

  it("builds the same tables, columns, constraints and enums", () => {
    expect(fromMigrations.tables.filter((t) => t !== "_prisma_migrations")).toEqual(
      fromSchema.tables,
    );
    expect(fromMigrations.columns.filter((c) => !c.startsWith("_prisma_migrations |"))).toEqual(
      fromSchema.columns,
    );
    expect(fromMigrations.constraints.filter((c) => !c.startsWith("_prisma_migrations |"))).toEqual(
      fromSchema.constraints,
    );
    expect(fromMigrations.enums).toEqual(fromSchema.enums);
  });

  it("builds the same indexes, plus only the named custom ones", () => {
    const custom = customIndexNames();
    expect(custom.size).toBeGreaterThan(0);
    const name = (line: string) => line.split(" | ")[0] ?? "";
    const migrated = fromMigrations.indexes.filter((i) => name(i) !== "_prisma_migrations_pkey");
    expect(migrated.filter((i) => !custom.has(name(i)))).toEqual(fromSchema.indexes);
    expect(
      migrated
        .filter((i) => custom.has(name(i)))
        .map(name)
        .sort(),
    ).toEqual([...custom].sort());
    expect(fromMigrations.extensions).toContain("pg_trgm");
  });

  it("uses the status and type values of packages/contracts", () => {
    const expected: Record<string, readonly string[]> = {
      session_status: SessionStatusSchema.options,
      execution_status: ExecutionStatusSchema.options,
      parallel_type: ParallelTypeSchema.options,
      success_policy: SuccessPolicySchema.options,
      execution_kind: ExecutionKindSchema.options,
      timeline_event_type: TimelineEventTypeSchema.options,
      timeline_event_status: TimelineEventStatusSchema.options,
      message_role: MessageRoleSchema.options,
      llm_interaction_type: LLMInteractionTypeSchema.options,
      mcp_interaction_type: MCPInteractionTypeSchema.options,
    };
    for (const [type, values] of Object.entries(expected)) {
      expect(fromMigrations.enums).toContain(`${type} = ${values.join(",")}`);
    }
  });

  it("keeps migrations in Prisma's folder format", () => {
    const lock = readFileSync(join(DEFAULT_MIGRATIONS_DIR, "migration_lock.toml"), "utf8");
    expect(lock).toMatch(/^provider = "postgresql"$/m);
    for (const m of readMigrations()) expect(m.name).toMatch(/^\d{14}_[a-z0-9_]+$/);
  });
});
