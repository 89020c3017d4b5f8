/** Replaced at build time by vite.config.ts with the build's id (also in dist/version.json). */
declare const __TARSY_BUILD__: string;
