import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { type Prisma, PrismaClient } from "./generated/prisma/client.ts";
import type { DbLogger } from "./logger.ts";

export type { PrismaClient };
/** The client inside `$transaction(async (tx) => …)`. */
export type Tx = Prisma.TransactionClient;
/** Either the root client or a transaction: every data-access function accepts both. */
export type DbClient = PrismaClient | Tx;

export interface CreateDbOptions {
  readonly url: string;
  readonly logger?: DbLogger;
  /** Pool size (default 10). */
  readonly poolSize?: number;
  /** Longest an interactive transaction may run, ms (default 15 s). */
  readonly transactionTimeoutMs?: number;
}

export interface Db {
  readonly prisma: PrismaClient;
  /** A cheap round trip (`SELECT 1`): resolves when Postgres answers, for readiness checks. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export function createDb(options: CreateDbOptions): Db {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize ?? 10,
    application_name: "tarsy",
  });
  pool.on("error", (err) => options.logger?.warn({ err }, "idle postgres connection failed"));
  const prisma = new PrismaClient({
    adapter: new PrismaPg(pool),
    transactionOptions: { timeout: options.transactionTimeoutMs ?? 15_000, maxWait: 10_000 },
  });
  let closed: Promise<void> | undefined;
  return {
    prisma,
    ping: () => pingDatabase(prisma),
    close: () => {
      closed ??= prisma.$disconnect().then(() => pool.end());
      return closed;
    },
  };
}

/** A cheap round trip (`SELECT 1`): resolves when Postgres answers, for readiness checks. */
export async function pingDatabase(client: DbClient): Promise<void> {
  await client.$queryRaw`SELECT 1`;
}

/**
 * Runs `fn` in a transaction: a new one from the root client, or the caller's when `client`
 * is already a transaction (so functions compose inside `withSessionLock`).
 */
export function inTransaction<T>(client: DbClient, fn: (tx: Tx) => Promise<T>): Promise<T> {
  if ("$transaction" in client) return client.$transaction(fn);
  return fn(client);
}
