/**
 * Writes the next migration: the SQL diff between the schema as of the newest migration
 * (prisma/snapshot/schema.prisma) and prisma/schema.prisma, in Prisma's folder format.
 *
 *   pnpm --filter @tarsy/db run migration:new <name> [--allow-empty]
 *
 * SQL that Prisma cannot express goes below a `-- tarsy:custom` line at the end of the new
 * migration.sql (edit it before the migration is applied anywhere: the checksum is fixed then).
 */
import { writeNextMigration } from "./next-migration.ts";

const args = process.argv.slice(2);
const name = args.find((arg) => !arg.startsWith("--"));
if (name === undefined || !/^[a-z0-9_]+$/.test(name)) {
  console.error("usage: migration:new <name in snake_case> [--allow-empty]");
  process.exitCode = 2;
} else {
  const folder = await writeNextMigration({ name, allowEmpty: args.includes("--allow-empty") });
  console.log(
    folder === null
      ? "prisma/schema.prisma has no changes since the last migration."
      : `Wrote ${folder}/migration.sql and updated prisma/snapshot/schema.prisma.`,
  );
}
