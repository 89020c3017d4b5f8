import { type Document, isMap, isPair, isScalar, isSeq, parse as parseYaml, Scalar } from "yaml";

/** `{{.VAR}}` (TARSy's Go-template form) and `${VAR}` / `${VAR:-default}`; `$${` is a literal `${`. */
const PLACEHOLDER_RE =
  /\$\$\{|\{\{\s*\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;
const WHOLE_TEMPLATE_RE = /^\{\{\s*\.[A-Za-z_][A-Za-z0-9_]*\s*\}\}$/;

/**
 * How a field treats an unset variable: `required` (an error), `optional` (empty value and a
 * warning) or `text` (free text such as instructions: an unset `${VAR}` stays as written, since
 * prose and shell snippets use that syntax; an unset `{{.VAR}}` becomes empty).
 */
export type FieldKind = "required" | "optional" | "text";

export interface MissingVariable {
  variable: string;
  path: string;
  kind: FieldKind;
  /** True when the placeholder was left in the value as written. */
  kept: boolean;
}

export interface InterpolationResult {
  value: string;
  missing: MissingVariable[];
}

/**
 * Replaces placeholders in one string. A variable that is not set is reported in `missing`
 * (unless it has a `${VAR:-default}` default) and yields "" (or, in `text` fields, an unset
 * `${VAR}` stays as written); the caller decides whether that is an error.
 */
export function interpolateString(
  text: string,
  env: Readonly<Record<string, string | undefined>>,
  path = "",
  kind: FieldKind = "required",
): InterpolationResult {
  const missing: MissingVariable[] = [];
  const value = text.replace(
    PLACEHOLDER_RE,
    (whole, goVar: string | undefined, shVar: string | undefined, fallback: string | undefined) => {
      if (whole === "$${") return "${";
      const variable = (goVar ?? shVar) as string;
      const found = env[variable];
      if (found !== undefined) return found;
      if (fallback !== undefined) return fallback;
      const kept = kind === "text" && shVar !== undefined;
      missing.push({ variable, path, kind, kept });
      return kept ? whole : "";
    },
  );
  return { value, missing };
}

export function hasPlaceholder(text: string): boolean {
  PLACEHOLDER_RE.lastIndex = 0;
  const found = PLACEHOLDER_RE.test(text);
  PLACEHOLDER_RE.lastIndex = 0;
  return found;
}

/** Decides how the field at a path treats an unset variable. */
export type FieldKindOf = (path: readonly (string | number)[]) => FieldKind;

export function formatPath(path: readonly (string | number)[]): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else out += out ? `.${segment}` : segment;
  }
  return out;
}

/**
 * Interpolates every string value of a parsed YAML document in place (comments and keys are
 * left alone). Unquoted values are re-typed after substitution, as if the text had been
 * substituted before parsing: `max_iterations: {{.N}}` with N=20 gives the number 20.
 */
export function interpolateDocument(
  doc: Document,
  sourceText: string,
  env: Readonly<Record<string, string | undefined>>,
  kindOf: FieldKindOf,
): MissingVariable[] {
  const missing: MissingVariable[] = [];

  const substitute = (text: string, path: (string | number)[], retype: boolean): unknown => {
    const result = interpolateString(text, env, formatPath(path), kindOf(path));
    missing.push(...result.missing);
    if (!retype) return result.value;
    try {
      const typed: unknown = parseYaml(result.value);
      return typed === null || typeof typed === "object" ? result.value : typed;
    } catch {
      return result.value;
    }
  };

  const visit = (node: unknown, path: (string | number)[]): unknown => {
    if (isScalar(node)) {
      if (typeof node.value !== "string" || !hasPlaceholder(node.value)) return node;
      const plain = node.type === Scalar.PLAIN;
      return new Scalar(substitute(node.value, path, plain));
    }
    if (isMap(node)) {
      const template = flowTemplateText(node, sourceText);
      if (template !== undefined) return new Scalar(substitute(template, path, true));
      for (const item of node.items) {
        if (!isPair(item)) continue;
        const key = isScalar(item.key) ? String(item.key.value) : String(item.key);
        item.value = visit(item.value, [...path, key]) as typeof item.value;
      }
      return node;
    }
    if (isSeq(node)) {
      node.items = node.items.map((item, index) => visit(item, [...path, index]));
      return node;
    }
    return node;
  };

  doc.contents = visit(doc.contents, []) as typeof doc.contents;
  return missing;
}

/**
 * An unquoted `{{.VAR}}` value parses as a nested flow mapping; recognise it by its source text.
 */
function flowTemplateText(
  node: { flow?: boolean; range?: [number, number, number] | null; items: unknown[] },
  sourceText: string,
): string | undefined {
  if (!node.flow || node.items.length !== 1 || !node.range) return undefined;
  const text = sourceText.slice(node.range[0], node.range[1]).trim();
  return WHOLE_TEMPLATE_RE.test(text) ? text : undefined;
}
