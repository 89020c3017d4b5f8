/**
 * The vitest fixtures of the test resources (a database, a bus of the test's own). The
 * resources themselves (`./resources`) do not need vitest: benchmarks use them too.
 */
import { createDb, type Db } from "@tarsy/db";
import { test as base } from "vitest";
import { createTestDatabase, type TestDatabase } from "./db.ts";
import { createTestBus, type TestBus } from "./nats.ts";

/**
 * `test` with `database` (a migrated database of the test's own) and `db` (a client on it);
 * both are torn down after the test.
 */
export const dbTest = base.extend<{ database: TestDatabase; db: Db }>({
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads fixture dependencies from this pattern
  database: async ({}, use) => {
    const database = await createTestDatabase();
    try {
      await use(database);
    } finally {
      await database.drop();
    }
  },
  db: async ({ database }, use) => {
    const db = createDb({ url: database.url, poolSize: 5 });
    try {
      await use(db);
    } finally {
      await db.close();
    }
  },
});

/** `test` with a `nats` fixture: a provisioned bus of the test's own, cleaned up after it. */
export const natsTest = base.extend<{ nats: TestBus }>({
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads fixture dependencies from this pattern
  nats: async ({}, use) => {
    const testBus = await createTestBus();
    try {
      await use(testBus);
    } finally {
      await testBus.cleanup();
    }
  },
});
