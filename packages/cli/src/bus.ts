import { type Bus, type BusAdmin, busOptionsFromEnv, connectBus, createBusAdmin } from "@tarsy/bus";
import { createLogger } from "@tarsy/runtime";
import type { CliEnv } from "./env.ts";
import { UnreachableError } from "./errors.ts";

/** Connects to NATS with the environment's settings, runs `use`, then closes the connection. */
export async function withBus<T>(env: CliEnv, use: (bus: Bus) => Promise<T>): Promise<T> {
  // Library warnings (e.g. skipped unreadable events) go to stderr; stdout stays data only.
  const logger = createLogger({ service: "tarsy-cli", level: "warn", destination: process.stderr });
  const options = { ...busOptionsFromEnv(env.nats, { name: "tarsy-cli", logger }) };
  let bus: Bus;
  try {
    bus = await connectBus({ ...options, waitOnFirstConnect: false });
  } catch (error) {
    throw new UnreachableError("NATS", env.nats.NATS_URL, error);
  }
  try {
    return await use(bus);
  } finally {
    await bus.close().catch(() => undefined);
  }
}

/** `withBus` for the admin side: dead letters, backlogs, sequences. */
export function withBusAdmin<T>(env: CliEnv, use: (admin: BusAdmin) => Promise<T>): Promise<T> {
  return withBus(env, (bus) => use(createBusAdmin(bus)));
}
