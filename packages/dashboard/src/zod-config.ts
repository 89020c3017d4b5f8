import { config } from "zod/v4/core";

/**
 * Zod without `new Function`. ingest-api serves the dashboard under a Content-Security-Policy
 * without `'unsafe-eval'`; zod's object schemas would otherwise probe `new Function` as they are
 * built, and the refused probe is reported as a CSP violation on every page load (parsing works
 * either way). main.tsx imports this first, and the build keeps it in zod's own chunk
 * (vite.config.ts), which runs before any chunk that builds a schema.
 */
config({ jitless: true });
