import { resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const EVALS_DIR = resolve(fileURLToPath(new URL("..", import.meta.url)));
export const ROOT = resolve(EVALS_DIR, "..");
export const CASES_DIR = resolve(EVALS_DIR, "cases");
export const FIXTURE_CASES_DIR = resolve(EVALS_DIR, "test/fixtures/cases");
export const CATALOG_PATH = resolve(EVALS_DIR, "servers.json");
export const WIRING_CASES_DIR = resolve(EVALS_DIR, "test/fixtures/wiring-cases");
