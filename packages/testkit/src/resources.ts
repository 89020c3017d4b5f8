/**
 * The test resources that need no vitest (benchmarks and scripts use them): a migrated
 * Postgres database and a provisioned bus of their own.
 */
export {
  type CreateTestDatabaseOptions,
  createTestDatabase,
  createTestDb,
  databaseUrl,
  type TestDatabase,
  type TestDb,
} from "./db.ts";
export { type CreateTestBusOptions, createTestBus, natsUrl, type TestBus } from "./nats.ts";
