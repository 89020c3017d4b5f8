import type { IncomingMessage } from "node:http";
import { AuthError, identityHeaderCheck } from "@tarsy/authz";
import type { AuthorizationConfig } from "@tarsy/config";

/** Why an upgrade's identity headers are refused, or null when they may be read. */
export type ProxyTrust = (req: IncomingMessage) => { code: string; message: string } | null;

/**
 * The trusted-proxy rule of `authorization.trusted_proxies`, as ingest-api applies it: identity
 * headers from any other address are a 401, whether or not authorization is on. While it is
 * on, `RelayAccess.identify` applies the same rule as part of identifying the caller.
 */
export function createProxyTrust(
  config: Pick<AuthorizationConfig, "scopes" | "trusted_proxies">,
): ProxyTrust {
  const check = identityHeaderCheck(config);
  return (req) => {
    try {
      check({
        remoteAddress: req.socket.remoteAddress,
        header: (name) => {
          const value = req.headers[name.toLowerCase()];
          return Array.isArray(value) ? value.join(", ") : value;
        },
      });
      return null;
    } catch (err) {
      if (err instanceof AuthError) return { code: err.code, message: err.message };
      throw err;
    }
  };
}
