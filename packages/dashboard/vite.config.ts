import { randomUUID } from "node:crypto";
import { defineConfig, type Plugin } from "vite";

/**
 * Every build gets an id, compiled into the bundle and written to dist/version.json; a page
 * polls version.json and offers a reload when the served build is no longer the one it runs.
 */
function buildId(id: string): Plugin {
  return {
    name: "tarsy-build-id",
    apply: "build",
    generateBundle() {
      this.emitFile({
        type: "asset",
        fileName: "version.json",
        source: JSON.stringify({ build: id }),
      });
    },
  };
}

/**
 * The SPA build (`pnpm --filter @tarsy/dashboard build` → dist/), served by ingest-api with
 * DASHBOARD_DIR=packages/dashboard/dist. In dev, `/api` is proxied to ingest-api and the
 * relay's WebSocket path to stream-relay.
 */
export default defineConfig(({ command }) => {
  const id = command === "build" ? `${Date.now().toString(36)}-${randomUUID().slice(0, 8)}` : "dev";
  return {
    root: import.meta.dirname,
    define: { __TARSY_BUILD__: JSON.stringify(id) },
    plugins: [buildId(id)],
    build: {
      outDir: "dist",
      emptyOutDir: true,
      sourcemap: true,
      rolldownOptions: {
        output: {
          // zod and its configuration (src/zod-config.ts: no `new Function`, which the CSP
          // refuses) in one chunk: every chunk that builds a schema imports it, so the
          // configuration is in place before the first schema is built.
          codeSplitting: {
            groups: [{ name: "zod", test: /node_modules[\\/]zod[\\/]|src[\\/]zod-config\.ts$/ }],
          },
        },
        // MUI X ships `"use client"` in every module: meaningless in an SPA, one warning each.
        onwarn(warning, warn) {
          if (warning.code === "MODULE_LEVEL_DIRECTIVE") return;
          warn(warning);
        },
      },
    },
    server: {
      proxy: {
        "/api/v1/ws": { target: "ws://127.0.0.1:8081", ws: true },
        "/api": "http://127.0.0.1:8080",
        "/health": "http://127.0.0.1:8080",
      },
    },
  };
});
