import { z } from "zod";

/** Runtime settings of the dashboard (served as `/config.json`, all optional). */
export const RuntimeConfigSchema = z.object({
  /** WebSocket URL of the stream relay; relative paths resolve against the page. */
  ws_url: z.string().min(1).optional(),
});
export type RuntimeConfig = z.infer<typeof RuntimeConfigSchema>;

export const DEFAULT_WS_PATH = "/api/v1/ws";

/**
 * Resolves the relay's WebSocket URL: the `ws` query parameter (remembered for the tab), then
 * `ws_url` of /config.json, then the same origin's `/api/v1/ws`.
 */
export function resolveWsUrl(
  location: { href: string; search: string },
  config: RuntimeConfig | null,
  remembered: string | null,
): string {
  const fromQuery = new URLSearchParams(location.search).get("ws");
  const chosen = fromQuery || remembered || config?.ws_url || DEFAULT_WS_PATH;
  const url = new URL(chosen, location.href);
  if (url.protocol === "http:") url.protocol = "ws:";
  if (url.protocol === "https:") url.protocol = "wss:";
  return url.toString();
}
