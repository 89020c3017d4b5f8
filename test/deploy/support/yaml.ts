import { createRequire } from "node:module";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root. */
export const ROOT = resolve(fileURLToPath(new URL("../../..", import.meta.url)));

interface YamlDocument {
  errors: readonly { message: string }[];
  toJS(): unknown;
}
interface YamlModule {
  parse(text: string, options?: { merge?: boolean }): unknown;
  parseAllDocuments(text: string, options?: { merge?: boolean }): YamlDocument[] | YamlDocument;
  stringify(value: unknown): string;
}

// The `yaml` package the workspace already uses (2.9.1), resolved through @tarsy/config so
// the shared test/package.json needs no new dependency.
const yaml = createRequire(resolve(ROOT, "packages/config/package.json"))("yaml") as YamlModule;

/** Every document of a multi-document YAML text, failing on the first syntax error. */
export function parseAllYaml(text: string, source: string): unknown[] {
  const parsed = yaml.parseAllDocuments(text, { merge: true });
  const docs = Array.isArray(parsed) ? parsed : [parsed];
  return docs.flatMap((doc) => {
    const [first] = doc.errors;
    if (first) throw new Error(`${source}: ${first.message}`);
    const value = doc.toJS();
    return value === null || value === undefined ? [] : [value];
  });
}

export function parseYaml(text: string, source: string): unknown {
  const [doc, extra] = parseAllYaml(text, source);
  if (extra !== undefined) throw new Error(`${source}: expected one YAML document`);
  return doc;
}

export function stringifyYaml(value: unknown): string {
  return yaml.stringify(value);
}
