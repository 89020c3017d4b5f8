import { z } from "zod";

/** The CLI's environment: its own settings plus every variable, for config interpolation. */
export const CliEnvSchema = z.object({
  TARSY_CONFIG_DIR: z.string().min(1).optional(),
});

export interface CliEnv {
  configDir?: string;
  /** The whole environment, passed to `loadConfig` for `{{.VAR}}` / `${VAR}`. */
  vars: Readonly<Record<string, string | undefined>>;
}

export function loadCliEnv(source: Record<string, string | undefined> = process.env): CliEnv {
  const parsed = CliEnvSchema.parse(source);
  return {
    ...(parsed.TARSY_CONFIG_DIR !== undefined && { configDir: parsed.TARSY_CONFIG_DIR }),
    vars: { ...source },
  };
}
