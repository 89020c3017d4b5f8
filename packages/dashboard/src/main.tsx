// First, before any schema is built: zod's configuration for the page's CSP.
import "./zod-config.ts";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { createAccessStore } from "./lib/access.ts";
import { createApiClient } from "./lib/api.ts";
import { RuntimeConfigSchema, resolveWsUrl } from "./lib/config.ts";
import { createLiveConnection } from "./lib/live.ts";
import { App } from "./ui/App.tsx";
import { ServicesContext } from "./ui/context.tsx";
import "./styles.css";

const WS_KEY = "tarsy.ws_url";

async function loadRuntimeConfig() {
  try {
    const res = await fetch("/config.json", { headers: { accept: "application/json" } });
    if (!res.ok) return null;
    const parsed = RuntimeConfigSchema.safeParse(await res.json());
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

async function start() {
  // Who the caller is loads alongside the runtime config; the pages follow it when it answers.
  const api = createApiClient();
  const access = createAccessStore(() => api.authMe());
  const fromQuery = new URLSearchParams(window.location.search).get("ws");
  if (fromQuery) sessionStorage.setItem(WS_KEY, fromQuery);
  const config = await loadRuntimeConfig();
  const wsUrl = resolveWsUrl(window.location, config, sessionStorage.getItem(WS_KEY));
  const services = { api, access, live: createLiveConnection({ url: wsUrl }) };
  // For operators and browser tests: drop the socket to watch the reconnect and catch-up.
  (window as unknown as { tarsyLive: unknown }).tarsyLive = services.live;
  const root = document.getElementById("root");
  if (!root) throw new Error("#root missing");
  createRoot(root).render(
    <StrictMode>
      <ServicesContext.Provider value={services}>
        <App />
      </ServicesContext.Provider>
    </StrictMode>,
  );
}

void start();
