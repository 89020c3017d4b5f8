import type { StreamKey } from "@tarsy/contracts";
import type { Logger } from "@tarsy/runtime";
import { z } from "zod";
import type { BusAdmin } from "./admin.ts";
import type { BusObserver } from "./observer.ts";
import { type BusAuth, type BusOptions, DEFAULT_PREFIX } from "./options.ts";

/**
 * The NATS settings every service reads from its environment; services merge this shape into
 * their own `env.ts` schema so the variables are the same everywhere.
 */
export const NatsEnvShape = {
  /** Comma-separated server URLs. */
  NATS_URL: z.string().min(1).default("nats://127.0.0.1:4222"),
  NATS_TOKEN: z.string().min(1).optional(),
  NATS_USER: z.string().min(1).optional(),
  NATS_PASSWORD: z.string().min(1).optional(),
  NATS_CREDS_FILE: z.string().min(1).optional(),
  NATS_TLS_CA_FILE: z.string().min(1).optional(),
  NATS_TLS_CERT_FILE: z.string().min(1).optional(),
  NATS_TLS_KEY_FILE: z.string().min(1).optional(),
  TARSY_SUBJECT_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .default(DEFAULT_PREFIX),
  TARSY_STREAM_SUFFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]*$/)
    .default(""),
  TARSY_STREAM_REPLICAS: z.coerce.number().int().min(1).max(5).default(1),
  /** Create/update streams and consumers at start (off when a deploy step provisions them). */
  TARSY_PROVISION_STREAMS: z.stringbool().default(true),
};
const NatsEnvSchema = z.object(NatsEnvShape);
export type NatsEnv = z.infer<typeof NatsEnvSchema>;

function authOf(env: NatsEnv): BusAuth {
  if (env.NATS_CREDS_FILE) return { kind: "credentials", file: env.NATS_CREDS_FILE };
  if (env.NATS_TOKEN) return { kind: "token", token: env.NATS_TOKEN };
  if (env.NATS_USER && env.NATS_PASSWORD) {
    return { kind: "userPass", user: env.NATS_USER, pass: env.NATS_PASSWORD };
  }
  return { kind: "none" };
}

/** Bus options from a parsed environment (see `NatsEnvShape`). */
export function busOptionsFromEnv(
  env: NatsEnv,
  service: {
    name: string;
    logger: Logger;
    observer?: BusObserver;
    /** Streams' max age from the config (e.g. `{ events: retention.event_ttl_ms }`). */
    streamMaxAgeMs?: Partial<Record<StreamKey, number>>;
  },
): BusOptions {
  const tls =
    env.NATS_TLS_CA_FILE || env.NATS_TLS_CERT_FILE
      ? {
          ...(env.NATS_TLS_CA_FILE ? { caFile: env.NATS_TLS_CA_FILE } : {}),
          ...(env.NATS_TLS_CERT_FILE ? { certFile: env.NATS_TLS_CERT_FILE } : {}),
          ...(env.NATS_TLS_KEY_FILE ? { keyFile: env.NATS_TLS_KEY_FILE } : {}),
        }
      : undefined;
  return {
    servers: env.NATS_URL.split(",").map((s) => s.trim()),
    name: service.name,
    logger: service.logger,
    prefix: env.TARSY_SUBJECT_PREFIX,
    streamSuffix: env.TARSY_STREAM_SUFFIX,
    replicas: env.TARSY_STREAM_REPLICAS,
    auth: authOf(env),
    waitOnFirstConnect: true,
    ...(tls ? { tls } : {}),
    ...(service.observer ? { observer: service.observer } : {}),
    ...(service.streamMaxAgeMs ? { streamMaxAgeMs: service.streamMaxAgeMs } : {}),
  };
}

/**
 * The one provisioning switch of every service: at start, creates or updates the catalog's
 * streams and consumers unless `TARSY_PROVISION_STREAMS=false`.
 */
export async function provisionOnStart(
  admin: BusAdmin,
  env: Pick<NatsEnv, "TARSY_PROVISION_STREAMS">,
): Promise<void> {
  if (env.TARSY_PROVISION_STREAMS) await admin.provision();
}
