import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { ConfigError, type ConfigIssue, type LoadConfigResult, loadConfig } from "../src/index.ts";

const created: string[] = [];

afterEach(() => {
  for (const dir of created.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh config directory holding the given files (removed after the test). */
export function configDir(files: { tarsy?: string; providers?: string } = {}): string {
  const dir = mkdtempSync(join(tmpdir(), "tarsy-config-"));
  created.push(dir);
  if (files.tarsy !== undefined) writeFileSync(join(dir, "tarsy.yaml"), files.tarsy);
  if (files.providers !== undefined)
    writeFileSync(join(dir, "llm-providers.yaml"), files.providers);
  return dir;
}

export function load(
  files: { tarsy?: string; providers?: string },
  env: Record<string, string> = {},
): LoadConfigResult & { dir: string } {
  const dir = configDir(files);
  return { ...loadConfig({ configDir: dir, env }), dir };
}

/** Loads files that must fail; returns the issues with the directory stripped from file names. */
export function loadIssues(
  files: { tarsy?: string; providers?: string },
  env: Record<string, string> = {},
): ConfigIssue[] {
  const dir = configDir(files);
  try {
    loadConfig({ configDir: dir, env });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.issues.map((issue) => ({ ...issue, file: issue.file.replace(`${dir}/`, "") }));
  }
  throw new Error("expected the configuration to be invalid");
}

/**
 * Issues without their `line`, for tests about what is reported where in the config tree
 * (validation.test.ts's "every issue names its line" is about the lines).
 */
export function withoutLines(issues: readonly ConfigIssue[]): Omit<ConfigIssue, "line">[] {
  return issues.map(({ line: _line, ...rest }) => rest);
}
