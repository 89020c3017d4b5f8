import { type NatsEnv, NatsEnvShape } from "@tarsy/bus";
import { z } from "zod";
import { readCookieFile } from "./cookie.ts";

export const DEFAULT_API_URL = "http://127.0.0.1:8080";
export const DEFAULT_WS_URL = "ws://127.0.0.1:8081/api/v1/ws";

/** The CLI's environment: its own settings plus every variable, for config interpolation. */
export const CliEnvSchema = z.object({
  TARSY_CONFIG_DIR: z.string().min(1).optional(),
  TARSY_API_URL: z.url().default(DEFAULT_API_URL),
  TARSY_WS_URL: z
    .url()
    .refine((url) => /^wss?:\/\//.test(url), "TARSY_WS_URL must be a ws:// or wss:// URL")
    .default(DEFAULT_WS_URL),
  /** Optional author header sent with API requests (as oauth2-proxy would). */
  TARSY_USER: z.string().min(1).optional(),
  /** An API token (`tarsy token create`), sent as `Authorization: Bearer` on every request. */
  TARSY_TOKEN: z.string().min(1).optional(),
  /**
   * A file holding the oauth2-proxy session cookie (`_oauth2_proxy=…`, or a Netscape cookie
   * jar), sent as `Cookie` on every request and the WebSocket's upgrade.
   */
  TARSY_COOKIE_FILE: z.string().min(1).optional(),
  ...NatsEnvShape,
});

export interface CliEnv {
  configDir?: string;
  /** Base URL of ingest-api (no trailing slash). */
  apiUrl: string;
  /** WebSocket URL of stream-relay. */
  wsUrl: string;
  user?: string;
  /** API token sent as `Authorization: Bearer` (HTTP and the WebSocket). */
  token?: string;
  /** `Cookie` header value from `TARSY_COOKIE_FILE` (HTTP and the WebSocket). */
  cookie?: string;
  /** NATS settings for `events` and `dlq` commands (see `busOptionsFromEnv`). */
  nats: NatsEnv;
  /** The whole environment, passed to `loadConfig` for `{{.VAR}}`. */
  vars: Readonly<Record<string, string | undefined>>;
}

export function loadCliEnv(source: Record<string, string | undefined> = process.env): CliEnv {
  const parsed = CliEnvSchema.parse(source);
  // From the raw source: parsing is not idempotent (a "true" becomes true).
  const nats = z.object(NatsEnvShape).parse(source);
  return {
    ...(parsed.TARSY_CONFIG_DIR !== undefined && { configDir: parsed.TARSY_CONFIG_DIR }),
    ...(parsed.TARSY_USER !== undefined && { user: parsed.TARSY_USER }),
    ...(parsed.TARSY_TOKEN !== undefined && { token: parsed.TARSY_TOKEN }),
    ...(parsed.TARSY_COOKIE_FILE !== undefined && {
      cookie: readCookieFile(parsed.TARSY_COOKIE_FILE),
    }),
    apiUrl: parsed.TARSY_API_URL.replace(/\/+$/, ""),
    wsUrl: parsed.TARSY_WS_URL,
    nats,
    vars: { ...source },
  };
}
