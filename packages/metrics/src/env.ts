import { z } from "zod";

/** The default port of every service's ops server (`/metrics`, `/health`, `/ready`). */
export const DEFAULT_METRICS_PORT = 9464;

/**
 * The ops server's settings; services without an HTTP port of their own merge this shape into
 * their `env.ts` schema, so the variables are the same everywhere.
 */
export const MetricsEnvShape = {
  /** Interface the ops server binds. */
  METRICS_HOST: z.string().min(1).default("0.0.0.0"),
  /** Port of `/metrics`, `/health` and `/ready`; 0 picks a free port. */
  METRICS_PORT: z.coerce.number().int().min(0).max(65_535).default(DEFAULT_METRICS_PORT),
};
