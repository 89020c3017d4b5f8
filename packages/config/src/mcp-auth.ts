import { z } from "zod";

/**
 * `mcp_servers.<id>.auth` (the Go TARSy's token-exchange design): whose credentials a tool
 * call carries.
 * - `shared`: the server's own `transport.bearer_token` (the default);
 * - `forward_user_token`: the submitting (or asking) user's bearer token, as it came in;
 * - `token_exchange`: that token exchanged at an STS (RFC 8693) for one meant for this server,
 *   at call time.
 * With no user token (a session from Alertmanager or an API token), a per-user mode fails the
 * call unless `fallback_to_shared` is set.
 */
export const MCP_AUTH_MODES = ["shared", "forward_user_token", "token_exchange"] as const;
export type McpAuthMode = (typeof MCP_AUTH_MODES)[number];

const HttpUrl = z
  .string()
  .refine((url) => URL.canParse(url) && /^https?:$/.test(new URL(url).protocol), {
    error: "is not a valid http(s) URL",
  });

export const McpAuthSchema = z
  .strictObject({
    mode: z.enum(MCP_AUTH_MODES).default("shared"),
    fallback_to_shared: z.boolean().default(false),
    token_exchange: z
      .strictObject({
        sts_url: HttpUrl,
        client_id: z.string().min(1),
        /** The client secret, usually `{{.SOME_ENV_VAR}}`. */
        client_secret: z.string().optional(),
        /** Or the name of the environment variable that holds it. */
        client_secret_env: z.string().min(1).optional(),
        audience: z.string().min(1).optional(),
        scopes: z.array(z.string().min(1)).default([]),
      })
      .optional(),
  })
  .superRefine((auth, ctx) => {
    if (auth.mode === "token_exchange" && !auth.token_exchange) {
      ctx.addIssue({
        code: "custom",
        path: ["token_exchange"],
        message: "mode token_exchange needs a token_exchange block (sts_url, client_id, …)",
      });
    }
    if (auth.mode !== "token_exchange" && auth.token_exchange) {
      ctx.addIssue({
        code: "custom",
        path: ["token_exchange"],
        message: `is only read with mode token_exchange (mode is ${auth.mode})`,
      });
    }
  });

export interface McpAuthConfig {
  mode: McpAuthMode;
  fallback_to_shared: boolean;
  token_exchange?: {
    sts_url: string;
    client_id: string;
    client_secret?: string;
    client_secret_env?: string;
    audience?: string;
    scopes: string[];
  };
}

export const SHARED_MCP_AUTH: McpAuthConfig = { mode: "shared", fallback_to_shared: false };
