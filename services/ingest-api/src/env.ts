import { NatsEnvShape } from "@tarsy/bus";
import { parseDuration } from "@tarsy/config";
import { parseEnv, ServiceEnvShape } from "@tarsy/runtime";
import { z } from "zod";

const duration = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((text, ctx) => {
      const ms = parseDuration(text);
      if (ms === undefined) {
        ctx.addIssue({ code: "custom", message: `not a duration (e.g. 30m, 4h): ${text}` });
        return z.NEVER;
      }
      return ms;
    });

const optional = z
  .string()
  .optional()
  .transform((v) => (v?.trim() ? v : undefined));

/**
 * A WebSocket URL as the dashboard takes it: ws(s):// or http(s):// (the page swaps the scheme),
 * or a path on the page's own origin (`/api/v1/ws`).
 */
const webSocketUrl = optional.refine(
  (v) =>
    v === undefined ||
    (v.startsWith("/") && !v.startsWith("//")) ||
    (URL.canParse(v) && ["ws:", "wss:", "http:", "https:"].includes(new URL(v).protocol)),
  { message: "a ws(s):// or http(s):// URL, or a path such as /api/v1/ws" },
);

export const EnvSchema = z
  .object({
    ...ServiceEnvShape,
    ...NatsEnvShape,
    HOST: z.string().default("0.0.0.0"),
    PORT: z.coerce.number().int().min(0).max(65535).default(8080),
    DATABASE_URL: z.string().min(1).default("postgres://postgres@127.0.0.1:5432/tarsy"),
    DATABASE_POOL_SIZE: z.coerce.number().int().positive().default(10),
    TARSY_CONFIG_DIR: z.string().default("deploy/config"),
    /** host:port of llm-service for /health (unset: not checked). */
    LLM_SERVICE_ADDRESS: optional,
    MAX_ALERT_BYTES: z.coerce
      .number()
      .int()
      .positive()
      .default(1024 * 1024),
    /** Deepest nesting of arrays/objects in a JSON request body. */
    MAX_JSON_DEPTH: z.coerce.number().int().min(2).max(1000).default(64),
    /** Request line plus headers, in bytes (Node's `maxHeaderSize`); more is a 431. */
    MAX_HEADER_BYTES: z.coerce
      .number()
      .int()
      .min(1024)
      .default(16 * 1024),
    PUBLISH_TIMEOUT_MS: z.coerce.number().int().positive().default(5_000),
    DEPENDENCY_TIMEOUT_MS: z.coerce.number().int().positive().default(2_000),
    OUTBOX_RELAY_INTERVAL_MS: z.coerce.number().int().positive().default(2_000),
    ALERTMANAGER_DEDUPE_WINDOW: duration("4h"),
    ALERTMANAGER_ALERT_TYPE_LABEL: z.string().min(1).default("alertname"),
    ALERTMANAGER_MODE: z.enum(["per_alert", "per_group"]).default("per_alert"),
    /** Most alerts one webhook notification may carry (413 past it, nothing stored). */
    ALERTMANAGER_MAX_ALERTS: z.coerce.number().int().positive().max(10_000).default(1000),
    /** Annotation holding an alert's runbook URL. */
    ALERTMANAGER_RUNBOOK_ANNOTATION: z.string().min(1).default("runbook_url"),
    ALERTMANAGER_BEARER_TOKEN: optional,
    ALERTMANAGER_BASIC_USER: optional,
    ALERTMANAGER_BASIC_PASSWORD: optional,
    /**
     * Key (32 bytes, base64) sealing users' bearer tokens kept while their sessions run, for
     * MCP servers with per-user credentials; the gateway opens them with the same key.
     */
    TARSY_TOKEN_KEY: optional,
    /** Directory of the built dashboard, served at / (unset: API only). */
    DASHBOARD_DIR: optional,
    /**
     * The stream relay's WebSocket URL handed to the dashboard (`/config.json`); an absolute
     * URL's origin is added to where the dashboard's Content-Security-Policy lets it connect.
     */
    TARSY_WS_URL: webSocketUrl,
  })
  .superRefine((env, ctx) => {
    if (env.ALERTMANAGER_BASIC_USER && !env.ALERTMANAGER_BASIC_PASSWORD) {
      ctx.addIssue({
        code: "custom",
        path: ["ALERTMANAGER_BASIC_PASSWORD"],
        message: "required when ALERTMANAGER_BASIC_USER is set",
      });
    }
  });
export type Env = z.infer<typeof EnvSchema>;

export function loadEnv(source: Record<string, string | undefined> = process.env): Env {
  const env = parseEnv(EnvSchema, source);
  if (env.ALERTMANAGER_BASIC_USER && !env.ALERTMANAGER_BASIC_PASSWORD) {
    parseEnv(
      z.object({
        ALERTMANAGER_BASIC_PASSWORD: z.string({ message: "required with ALERTMANAGER_BASIC_USER" }),
      }),
      {},
    );
  }
  return env;
}

/** Variables the config files may interpolate (`{{.VAR}}`). */
export function configEnv(): Readonly<Record<string, string | undefined>> {
  return { ...process.env };
}
