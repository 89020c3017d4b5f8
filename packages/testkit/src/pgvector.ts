/**
 * Postgres with pgvector, for the tests of the pgvector path: Debian's Postgres here has no
 * pgvector package. PGlite is Postgres compiled to WebAssembly (from the npm registry), here
 * with its pgvector and pg_trgm extensions, served on a loopback port by pglite-socket, so
 * the code under test connects over the Postgres wire protocol as it does to any server.
 *
 * PGlite runs one backend: every connection shares one session, and the database name in a
 * URL is ignored. A test file therefore gets one migrated database, and `resetTables` gives
 * each test an empty one.
 */
import { PGlite } from "@electric-sql/pglite";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import { vector } from "@electric-sql/pglite-pgvector";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import { migrate } from "@tarsy/db";
import postgres from "postgres";

export interface PgvectorPostgres {
  /** A connection URL (user postgres, no password). */
  readonly url: string;
  /** Empties every table the migrations made (not their bookkeeping). */
  resetTables(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts PGlite with pgvector on a free loopback port and applies the migrations to it. */
export async function startPgvectorPostgres(
  options: { migrationsDir?: string } = {},
): Promise<PgvectorPostgres> {
  const pglite = await PGlite.create({ extensions: { vector, pg_trgm } });
  const server = new PGLiteSocketServer({
    db: pglite,
    host: "127.0.0.1",
    port: 0,
    maxConnections: 16,
  });
  await server.start();
  const url = `postgres://postgres@${server.getServerConn()}/postgres`;
  const stop = async () => {
    await server.stop();
    await pglite.close();
  };
  try {
    await migrate(url, { migrationsDir: options.migrationsDir });
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    url,
    stop,
    resetTables: async () => {
      const sql = postgres(url, { max: 1, onnotice: () => {} });
      try {
        const tables = await sql<{ t: string }[]>`
          SELECT quote_ident(tablename) AS t FROM pg_tables
           WHERE schemaname = 'public' AND tablename <> '_prisma_migrations'`;
        // Replica mode skips the triggers that keep the audit log append-only.
        await sql.begin(async (tx) => {
          await tx`SET LOCAL session_replication_role = replica`;
          await tx.unsafe(`TRUNCATE ${tables.map((r) => r.t).join(", ")} RESTART IDENTITY CASCADE`);
        });
      } finally {
        await sql.end({ timeout: 5 });
      }
    },
  };
}
