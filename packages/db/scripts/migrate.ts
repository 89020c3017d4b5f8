/** `pnpm db:migrate`: applies pending migrations to $DATABASE_URL. */
import { createLogger } from "@tarsy/runtime";
import { migrate } from "../src/migrate.ts";
import { loadMigrateEnv } from "./env.ts";

const env = loadMigrateEnv();
const logger = createLogger({ service: "db-migrate", level: env.LOG_LEVEL });
try {
  const result = await migrate(env.DATABASE_URL, { logger });
  logger.info(
    { applied: result.applied, already_applied: result.alreadyApplied.length },
    result.applied.length === 0 ? "database is up to date" : "migrations applied",
  );
} catch (error) {
  logger.error({ err: error }, "migration failed");
  process.exitCode = 1;
}
