import { parseEnv } from "@tarsy/runtime";
import { z } from "zod";

export const MigrateEnvSchema = z.object({
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, "must be a postgres:// URL"),
  LOG_LEVEL: z.enum(["trace", "debug", "info", "warn", "error", "fatal"]).default("info"),
});
export type MigrateEnv = z.infer<typeof MigrateEnvSchema>;

export function loadMigrateEnv(
  source: Record<string, string | undefined> = process.env,
): MigrateEnv {
  return parseEnv(MigrateEnvSchema, source);
}
