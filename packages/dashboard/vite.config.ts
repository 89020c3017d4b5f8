import { defineConfig } from "vite";

/**
 * The SPA build (`pnpm --filter @tarsy/dashboard build` → dist/), served by ingest-api with
 * DASHBOARD_DIR=packages/dashboard/dist. In dev, `/api` is proxied to ingest-api and the
 * relay's WebSocket path to stream-relay.
 */
export default defineConfig({
  root: import.meta.dirname,
  build: { outDir: "dist", emptyOutDir: true, sourcemap: true },
  server: {
    proxy: {
      "/api/v1/ws": { target: "ws://127.0.0.1:8081", ws: true },
      "/api": "http://127.0.0.1:8080",
    },
  },
});
