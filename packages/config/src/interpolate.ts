import { type Document, isMap, isPair, isScalar, isSeq, parse as parseYaml, Scalar } from "yaml";

/**
 * `{{.VAR}}` (TARSy's Go-template form) is the only placeholder. Anything else with a `$`
 * (`${USER_ID}` in a regex, `p@ss$word`, shell snippets) is left exactly as written.
 */
const PLACEHOLDER_RE = /\{\{\s*\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;
const WHOLE_TEMPLATE_RE = /^\{\{\s*\.[A-Za-z_][A-Za-z0-9_]*\s*\}\}$/;

/** Filled per agent execution (the execution's id), never from the environment. */
export const SESSION_ID_PLACEHOLDER = "{{.SESSION_ID}}";
const SESSION_ID_RE = /\{\{\s*\.SESSION_ID\s*\}\}/g;

export interface MissingVariable {
  variable: string;
  path: string;
}

export interface InterpolationResult {
  value: string;
  missing: MissingVariable[];
}

export interface InterpolateOptions {
  /** Keep `{{.SESSION_ID}}` for run time (MCP custom headers and session cleanup URLs). */
  keepSessionId?: boolean;
}

/**
 * Replaces `{{.VAR}}` placeholders in one string. A variable that is not set yields "" and is
 * reported in `missing`, as the Go TARSy does (an empty required field is then a validation
 * error, reported where it is).
 */
export function interpolateString(
  text: string,
  env: Readonly<Record<string, string | undefined>>,
  path = "",
  options: InterpolateOptions = {},
): InterpolationResult {
  const missing: MissingVariable[] = [];
  const value = text.replace(PLACEHOLDER_RE, (_whole, variable: string) => {
    if (options.keepSessionId && variable === "SESSION_ID") return SESSION_ID_PLACEHOLDER;
    const found = env[variable];
    if (found !== undefined) return found;
    missing.push({ variable, path });
    return "";
  });
  return { value, missing };
}

/** Fills the run-time `{{.SESSION_ID}}` placeholder with an execution's id ("" when none). */
export function fillSessionId(text: string, sessionId: string | undefined): string {
  return text.replace(SESSION_ID_RE, () => sessionId ?? "");
}

export function hasPlaceholder(text: string): boolean {
  PLACEHOLDER_RE.lastIndex = 0;
  const found = PLACEHOLDER_RE.test(text);
  PLACEHOLDER_RE.lastIndex = 0;
  return found;
}

/** Whether the field at a path keeps `{{.SESSION_ID}}` for run time. */
export type KeepsSessionId = (path: readonly (string | number)[]) => boolean;

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
  keepsSessionId: KeepsSessionId,
): MissingVariable[] {
  const missing: MissingVariable[] = [];

  const substitute = (text: string, path: (string | number)[], retype: boolean): unknown => {
    const result = interpolateString(text, env, formatPath(path), {
      keepSessionId: keepsSessionId(path),
    });
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
