/**
 * Test databases come from packages/testkit, imported by path: @tarsy/testkit depends on
 * @tarsy/db, so a package dependency back would be a cycle.
 */
export { createTestDatabase, createTestDb, type TestDatabase } from "../../testkit/src/db.ts";
export { dbTest } from "../../testkit/src/fixtures.ts";

import postgres from "postgres";

/** A raw connection for assertions; the callback's result is returned and the pool closed. */
export async function withSql<T>(url: string, fn: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(url, { max: 4, onnotice: () => {} });
  try {
    return await fn(sql);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

export interface Catalog {
  tables: string[];
  columns: string[];
  indexes: string[];
  constraints: string[];
  enums: string[];
  extensions: string[];
}

/** A comparable description of the public schema (tables, columns, indexes, constraints, enums). */
export async function readCatalog(url: string): Promise<Catalog> {
  return withSql(url, async (sql) => {
    const tables = await sql<{ t: string }[]>`
      SELECT table_name AS t FROM information_schema.tables
      WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1`;
    const columns = await sql<{ c: string }[]>`
      SELECT concat_ws(' | ', table_name, column_name, data_type, udt_name, is_nullable,
                       column_default, character_maximum_length, numeric_precision,
                       datetime_precision) AS c
      FROM information_schema.columns WHERE table_schema = 'public' ORDER BY 1`;
    const indexes = await sql<{ i: string }[]>`
      SELECT indexname || ' | ' || indexdef AS i FROM pg_indexes
      WHERE schemaname = 'public' ORDER BY 1`;
    const constraints = await sql<{ c: string }[]>`
      SELECT conrelid::regclass::text || ' | ' || conname || ' | ' || pg_get_constraintdef(oid) AS c
      FROM pg_constraint WHERE connamespace = 'public'::regnamespace ORDER BY 1`;
    const enums = await sql<{ e: string }[]>`
      SELECT t.typname || ' = ' || string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder) AS e
      FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid
      WHERE t.typnamespace = 'public'::regnamespace GROUP BY t.typname ORDER BY 1`;
    const extensions = await sql<{ x: string }[]>`SELECT extname AS x FROM pg_extension ORDER BY 1`;
    return {
      tables: tables.map((r) => r.t),
      columns: columns.map((r) => r.c),
      indexes: indexes.map((r) => r.i),
      constraints: constraints.map((r) => r.c),
      enums: enums.map((r) => r.e),
      extensions: extensions.map((r) => r.x),
    };
  });
}
