/**
 * Applies prisma/migrations/<name>/migration.sql in order, keeping Prisma's
 * `_prisma_migrations` bookkeeping so `prisma migrate deploy` can take over where its
 * engine is available. Each migration runs in one transaction; runs are serialized by the
 * same advisory lock Prisma's migrate uses, so several processes may start at once.
 */
import { createHash, randomUUID } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import {
  MigrationChecksumMismatchError,
  MigrationFailedError,
  MigrationsDirInvalidError,
  MigrationUnfinishedError,
} from "./errors.ts";
import type { DbLogger } from "./logger.ts";

/** prisma/migrations of this repository. */
export const DEFAULT_MIGRATIONS_DIR = resolve(
  dirname(fileURLToPath(import.meta.url)),
  "../../../prisma/migrations",
);
/** The advisory lock key of Prisma's schema engine (so both exclude each other). */
const PRISMA_MIGRATE_LOCK_KEY = 72707369;

export interface MigrationFile {
  readonly name: string;
  readonly sql: string;
  /** sha256 hex of migration.sql, as Prisma computes it. */
  readonly checksum: string;
}

export interface MigrateOptions {
  readonly migrationsDir?: string;
  readonly logger?: DbLogger;
}

export interface MigrateResult {
  /** Migrations applied by this run, in order. */
  readonly applied: readonly string[];
  /** Migrations found already applied. */
  readonly alreadyApplied: readonly string[];
}

interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

export function readMigrations(dir: string = DEFAULT_MIGRATIONS_DIR): MigrationFile[] {
  if (!existsSync(dir)) throw new MigrationsDirInvalidError(`No migrations directory at ${dir}`);
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const file = join(dir, name, "migration.sql");
      if (!existsSync(file)) throw new MigrationsDirInvalidError(`${file} is missing`);
      const bytes = readFileSync(file);
      return {
        name,
        sql: bytes.toString("utf8"),
        checksum: createHash("sha256").update(bytes).digest("hex"),
      };
    });
}

const CREATE_TABLE = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

/** Applies every pending migration to the database at `url`. Safe to run concurrently. */
export async function migrate(url: string, options: MigrateOptions = {}): Promise<MigrateResult> {
  const migrations = readMigrations(options.migrationsDir);
  const log = options.logger;
  // One connection: the session-level advisory lock and every transaction share it.
  const sql = postgres(url, {
    max: 1,
    onnotice: () => {},
    connection: { application_name: "tarsy-migrate" },
  });
  try {
    await sql`SELECT pg_advisory_lock(${PRISMA_MIGRATE_LOCK_KEY})`;
    try {
      await sql.unsafe(CREATE_TABLE);
      const rows = await sql<AppliedRow[]>`
        SELECT migration_name, checksum, finished_at, rolled_back_at
        FROM "_prisma_migrations" ORDER BY started_at`;
      const done = new Map<string, AppliedRow>();
      for (const row of rows) {
        if (row.rolled_back_at !== null) continue;
        if (row.finished_at === null) throw new MigrationUnfinishedError(row.migration_name);
        done.set(row.migration_name, row);
      }
      const applied: string[] = [];
      const alreadyApplied: string[] = [];
      for (const migration of migrations) {
        const previous = done.get(migration.name);
        if (previous !== undefined) {
          if (previous.checksum !== migration.checksum) {
            throw new MigrationChecksumMismatchError(
              migration.name,
              previous.checksum,
              migration.checksum,
            );
          }
          alreadyApplied.push(migration.name);
          continue;
        }
        await applyOne(sql, migration);
        log?.info({ migration: migration.name }, "migration applied");
        applied.push(migration.name);
      }
      const known = new Set(migrations.map((m) => m.name));
      for (const name of done.keys()) {
        if (!known.has(name)) log?.warn({ migration: name }, "applied migration missing locally");
      }
      return { applied, alreadyApplied };
    } finally {
      await sql`SELECT pg_advisory_unlock(${PRISMA_MIGRATE_LOCK_KEY})`;
    }
  } finally {
    await sql.end({ timeout: 5 });
  }
}

async function applyOne(sql: postgres.Sql, migration: MigrationFile): Promise<void> {
  const id = randomUUID();
  try {
    await sql.begin(async (tx) => {
      await tx`
        INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, applied_steps_count)
        VALUES (${id}, ${migration.checksum}, ${migration.name}, now(), 0)`;
      await tx.unsafe(migration.sql).simple();
      await tx`
        UPDATE "_prisma_migrations" SET finished_at = clock_timestamp(), applied_steps_count = 1
        WHERE id = ${id}`;
    });
  } catch (error) {
    // The transaction left nothing behind; record the attempt as rolled back, as
    // `prisma migrate resolve --rolled-back` would, so the next run retries it.
    await sql`
      INSERT INTO "_prisma_migrations"
        (id, checksum, migration_name, logs, started_at, rolled_back_at, applied_steps_count)
      VALUES (${id}, ${migration.checksum}, ${migration.name}, ${String(error)}, now(), now(), 0)`;
    throw new MigrationFailedError(migration.name, error);
  }
}
