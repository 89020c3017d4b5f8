import { createHash } from "node:crypto";
import type { McpAuthConfig } from "@tarsy/config";
import { fetch as undiciFetch } from "undici";
import { TokenExchangeError } from "../errors.ts";

export const TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange";
export const ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token";

type ExchangeConfig = NonNullable<McpAuthConfig["token_exchange"]>;

export interface TokenExchangerOptions {
  /** Where `client_secret_env` is looked up (the gateway's environment). */
  env: Readonly<Record<string, string | undefined>>;
  /** An exchanged token is used until this long before it expires. Default 30 s. */
  expirySkewMs?: number;
  /** How long a token whose STS gave no `expires_in` is reused. Default 60 s. */
  defaultLifetimeMs?: number;
  timeoutMs?: number;
  now?: () => number;
}

interface Cached {
  token: string;
  expiresAt: number;
}

/**
 * RFC 8693 token exchange, done when a per-user server is called, cached per (user token,
 * server) until shortly before the exchanged token expires. Concurrent calls share one
 * request. Errors name the server and the STS's error code, never a token.
 */
export class TokenExchanger {
  private readonly cache = new Map<string, Cached>();
  private readonly inFlight = new Map<string, Promise<string>>();
  private readonly now: () => number;

  constructor(private readonly options: TokenExchangerOptions) {
    this.now = options.now ?? Date.now;
  }

  async exchange(server: string, config: ExchangeConfig, userToken: string): Promise<string> {
    // The key holds a digest, so the cache's keys never hold a token.
    const key = `${server}\u0000${createHash("sha256").update(userToken).digest("hex")}`;
    const cached = this.cache.get(key);
    if (cached && cached.expiresAt > this.now()) return cached.token;
    if (cached) this.cache.delete(key);
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    const request = this.request(server, config, userToken)
      .then(({ token, lifetimeMs }) => {
        const skew = this.options.expirySkewMs ?? 30_000;
        const usable = Math.max(0, lifetimeMs - Math.min(skew, lifetimeMs / 2));
        this.sweep();
        if (usable > 0) this.cache.set(key, { token, expiresAt: this.now() + usable });
        return token;
      })
      .finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, request);
    return request;
  }

  /** Drops expired entries (called now and then; expired ones are never used anyway). */
  sweep(): void {
    const now = this.now();
    for (const [key, entry] of this.cache) if (entry.expiresAt <= now) this.cache.delete(key);
  }

  size(): number {
    return this.cache.size;
  }

  private clientSecret(server: string, config: ExchangeConfig): string {
    const secret =
      config.client_secret ??
      (config.client_secret_env ? this.options.env[config.client_secret_env] : undefined);
    if (!secret) {
      throw new TokenExchangeError(
        server,
        config.client_secret_env
          ? `the client secret variable ${config.client_secret_env} is not set`
          : "no client secret is configured",
      );
    }
    return secret;
  }

  private async request(
    server: string,
    config: ExchangeConfig,
    userToken: string,
  ): Promise<{ token: string; lifetimeMs: number }> {
    const secret = this.clientSecret(server, config);
    const form = new URLSearchParams({
      grant_type: TOKEN_EXCHANGE_GRANT,
      subject_token: userToken,
      subject_token_type: ACCESS_TOKEN_TYPE,
      requested_token_type: ACCESS_TOKEN_TYPE,
    });
    if (config.audience) form.set("audience", config.audience);
    if (config.scopes.length > 0) form.set("scope", config.scopes.join(" "));
    // RFC 6749 §2.3.1: client id and secret form-encoded, then HTTP Basic.
    const basic = Buffer.from(
      `${encodeURIComponent(config.client_id)}:${encodeURIComponent(secret)}`,
    ).toString("base64");
    let response: Awaited<ReturnType<typeof undiciFetch>>;
    try {
      response = await undiciFetch(config.sts_url, {
        method: "POST",
        headers: {
          "Content-Type": "application/x-www-form-urlencoded",
          Accept: "application/json",
          Authorization: `Basic ${basic}`,
        },
        body: form.toString(),
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 10_000),
      });
    } catch (err) {
      const reason = err instanceof Error ? err.name : "request failed";
      throw new TokenExchangeError(server, `the STS could not be reached (${reason})`);
    }
    const body = (await response.json().catch(() => undefined)) as
      | Record<string, unknown>
      | undefined;
    if (!response.ok) {
      // Only the RFC 6749 error code: descriptions may echo what was sent.
      const code =
        typeof body?.error === "string" && /^[\w.-]{1,64}$/.test(body.error) ? body.error : "";
      throw new TokenExchangeError(
        server,
        `the STS answered HTTP ${response.status}${code ? ` (${code})` : ""}`,
      );
    }
    const token = body?.access_token;
    if (typeof token !== "string" || token.length === 0) {
      throw new TokenExchangeError(server, "the STS answer has no access_token");
    }
    const expiresIn = Number(body?.expires_in);
    const lifetimeMs =
      Number.isFinite(expiresIn) && expiresIn > 0
        ? expiresIn * 1000
        : (this.options.defaultLifetimeMs ?? 60_000);
    return { token, lifetimeMs };
  }
}
