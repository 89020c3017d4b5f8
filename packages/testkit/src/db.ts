/**
 * A Postgres database of its own for each test (or suite). Migrations are applied once into
 * a template database named after a hash of the migrations (built under an advisory lock,
 * then renamed into place, so parallel workers neither race nor see a half-built template);
 * each test database is a `CREATE DATABASE … TEMPLATE …` copy (~tens of ms), dropped after.
 *
 * Server: DATABASE_URL (any database on it; used only to administer), else
 * postgres://postgres@127.0.0.1:5432/postgres. When nothing listens there and Docker is
 * available, a testcontainers Postgres is started once per process (install
 * `@testcontainers/postgresql` for that; it is not a dependency here because these
 * machines have no Docker).
 */
import { createHash, randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { createDb, type Db, migrate, readMigrations } from "@tarsy/db";
import postgres from "postgres";

export const DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/postgres";

export const databaseUrl = (): string => process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL;

export interface TestDatabase {
  /** Connection URL of the test's own database. */
  readonly url: string;
  readonly name: string;
  /** Drops the database (terminating leftover connections). Idempotent. */
  drop(): Promise<void>;
}

export interface CreateTestDatabaseOptions {
  /** Server to use (default `databaseUrl()`). */
  readonly baseUrl?: string;
  /** Migrations to apply (default prisma/migrations). */
  readonly migrationsDir?: string;
  /** false: an empty database without migrations (for migration tests). */
  readonly migrated?: boolean;
}

export function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

const quoteIdent = (name: string): string => `"${name.replaceAll('"', '""')}"`;

function admin(url: string): postgres.Sql {
  return postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 5 });
}

async function reachable(url: string): Promise<boolean> {
  const sql = admin(url);
  try {
    await sql`SELECT 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 }).catch(() => undefined);
  }
}

let serverUrl: Promise<string> | undefined;

/** The admin URL of a reachable server: the configured one, or a testcontainers Postgres. */
function resolveServer(configured: string): Promise<string> {
  serverUrl ??= (async () => {
    if (await reachable(configured)) return configured;
    const dockerSocket =
      process.env.DOCKER_HOST !== undefined || existsSync("/var/run/docker.sock");
    if (!dockerSocket) {
      throw new Error(
        `No Postgres at ${configured} and no Docker for testcontainers. Start Postgres or set DATABASE_URL.`,
      );
    }
    // Optional dependency, resolved at run time only on machines with Docker.
    const moduleName = "@testcontainers/postgresql";
    const { PostgreSqlContainer } = (await import(moduleName)) as {
      PostgreSqlContainer: new (
        image: string,
      ) => { start(): Promise<{ getConnectionUri(): string; stop(): Promise<unknown> }> };
    };
    const container = await new PostgreSqlContainer("postgres:15-alpine").start();
    return container.getConnectionUri();
  })();
  return serverUrl;
}

/** Hash of the migrations' names and checksums: a new or edited migration → a new template. */
export function migrationsHash(migrationsDir?: string): string {
  const hash = createHash("sha256");
  for (const m of readMigrations(migrationsDir)) hash.update(`${m.name}\0${m.checksum}\0`);
  return hash.digest("hex").slice(0, 16);
}

const templates = new Map<string, Promise<string>>();

/** Creates (once per server and migrations hash) the migrated template; returns its name. */
function ensureTemplate(server: string, migrationsDir?: string): Promise<string> {
  const name = `tarsy_tpl_${migrationsHash(migrationsDir)}`;
  const key = `${server}|${name}`;
  let pending = templates.get(key);
  if (pending === undefined) {
    pending = buildTemplate(server, name, migrationsDir);
    pending.catch(() => templates.delete(key));
    templates.set(key, pending);
  }
  return pending;
}

async function buildTemplate(
  server: string,
  name: string,
  migrationsDir?: string,
): Promise<string> {
  const sql = admin(server);
  const exists = async () =>
    (await sql`SELECT 1 FROM pg_database WHERE datname = ${name}`).length === 1;
  try {
    if (await exists()) return name;
    const lockKey = Number.parseInt(name.slice(-8), 16) | 0;
    await sql`SELECT pg_advisory_lock(${lockKey})`;
    try {
      if (await exists()) return name;
      const building = `${name}_build`;
      await sql.unsafe(`DROP DATABASE IF EXISTS ${quoteIdent(building)} WITH (FORCE)`);
      await sql.unsafe(`CREATE DATABASE ${quoteIdent(building)}`);
      await migrate(withDatabase(server, building), { migrationsDir });
      // Renaming publishes the template atomically: it exists only once fully migrated.
      await sql.unsafe(`ALTER DATABASE ${quoteIdent(building)} RENAME TO ${quoteIdent(name)}`);
      return name;
    } finally {
      await sql`SELECT pg_advisory_unlock(${lockKey})`;
    }
  } finally {
    await sql.end({ timeout: 5 });
  }
}

const LEFTOVER_AGE_MS = 6 * 3600_000;
let sweptLeftovers: Promise<void> | undefined;

/** Drops test databases older than six hours that nobody is connected to (killed runs). */
async function sweepLeftovers(sql: postgres.Sql): Promise<void> {
  const rows = await sql<{ datname: string }[]>`
    SELECT datname FROM pg_database WHERE datname LIKE 'tarsy\_t\_%'`;
  for (const { datname } of rows) {
    const created = Number.parseInt(datname.split("_")[2] ?? "", 36);
    if (!Number.isFinite(created) || Date.now() - created < LEFTOVER_AGE_MS) continue;
    // Without FORCE: a database still in use is left alone.
    await sql.unsafe(`DROP DATABASE IF EXISTS ${quoteIdent(datname)}`).catch(() => undefined);
  }
}

/** A fresh database for one test or suite: migrated (default) or empty. */
export async function createTestDatabase(
  options: CreateTestDatabaseOptions = {},
): Promise<TestDatabase> {
  const server = await resolveServer(options.baseUrl ?? databaseUrl());
  const template =
    options.migrated === false ? "template0" : await ensureTemplate(server, options.migrationsDir);
  // The creation time in the name lets a later run remove databases a killed run left.
  const name = `tarsy_t_${Date.now().toString(36)}_${randomBytes(5).toString("hex")}`;
  const sql = admin(server);
  try {
    sweptLeftovers ??= sweepLeftovers(sql).catch(() => undefined);
    await sweptLeftovers;
    await createFromTemplate(sql, name, template);
  } finally {
    await sql.end({ timeout: 5 });
  }
  let dropped: Promise<void> | undefined;
  return {
    name,
    url: withDatabase(server, name),
    drop: () => {
      dropped ??= (async () => {
        const conn = admin(server);
        try {
          await conn.unsafe(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`);
        } finally {
          await conn.end({ timeout: 5 });
        }
      })();
      return dropped;
    },
  };
}

async function createFromTemplate(
  sql: postgres.Sql,
  name: string,
  template: string,
): Promise<void> {
  const [row] = await sql<{ v: number }[]>`SELECT current_setting('server_version_num')::int AS v`;
  // FILE_COPY (PG 15+) copies a small template about twice as fast as the default WAL_LOG.
  const strategy = (row?.v ?? 0) >= 150000 ? " STRATEGY FILE_COPY" : "";
  // Two CREATE DATABASE from one template at the same instant can fail with "source database
  // is being accessed by other users"; retry briefly.
  for (let attempt = 0; ; attempt++) {
    try {
      await sql.unsafe(
        `CREATE DATABASE ${quoteIdent(name)} TEMPLATE ${quoteIdent(template)}${strategy}`,
      );
      return;
    } catch (error) {
      const busy = error instanceof Error && /being accessed by other users/.test(error.message);
      if (!busy || attempt >= 50) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 80));
    }
  }
}

/** A test database plus a connected `@tarsy/db` client, closed and dropped after use. */
export interface TestDb {
  readonly database: TestDatabase;
  readonly db: Db;
  cleanup(): Promise<void>;
}

export async function createTestDb(options: CreateTestDatabaseOptions = {}): Promise<TestDb> {
  const database = await createTestDatabase(options);
  const db = createDb({ url: database.url, poolSize: 5 });
  return {
    database,
    db,
    cleanup: async () => {
      await db.close().catch(() => undefined);
      await database.drop();
    },
  };
}
