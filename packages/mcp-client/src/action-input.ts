import { parse as parseYaml } from "yaml";

/**
 * Parses an ActionInput (ReAct text or function-call arguments) into tool arguments, as
 * mcp-gateway does for every call (it lives here, beside the gateway's client, so that a
 * stand-in gateway in tests parses exactly as the real one).
 * The first format that fits wins:
 *   1. JSON object                       → as is
 *   2. JSON non-object (string, number, array, boolean, null) → `{ input: value }`
 *   3. YAML with structure (a list or nested map somewhere)  → the map
 *   4. `key: value` / `key=value` pairs, comma or newline separated → coerced values
 *   5. anything else                     → `{ input: "<raw text>" }`
 * Empty input gives `{}` (tools without parameters).
 */
export function parseActionInput(raw: string): Record<string, unknown> {
  const input = raw.trim();
  if (input === "") return {};
  return tryParseJson(input) ?? tryParseYaml(input) ?? tryParseKeyValue(input) ?? { input: input };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function tryParseJson(input: string): Record<string, unknown> | undefined {
  const first = input[0];
  const jsonStart =
    first === "{" ||
    first === "[" ||
    first === '"' ||
    /^-?\d/.test(input) ||
    input === "true" ||
    input === "false" ||
    input === "null";
  if (!jsonStart) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(input);
  } catch {
    return undefined;
  }
  return isPlainObject(value) ? value : { input: value };
}

/** Only YAML maps whose values hold structure (lists or maps); flat pairs go to the key-value step. */
function tryParseYaml(input: string): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = parseYaml(input, { uniqueKeys: true, maxAliasCount: 10 });
  } catch {
    return undefined;
  }
  if (!isPlainObject(value) || Object.keys(value).length === 0) return undefined;
  const structured = Object.values(value).some((v) => typeof v === "object" && v !== null);
  return structured ? value : undefined;
}

const PAIR = /^([A-Za-z_][\w.-]*)\s*(?:=|:)\s*(.*)$/s;

function tryParseKeyValue(input: string): Record<string, unknown> | undefined {
  const parts = input
    .split(/[,\n]/)
    .map((p) => p.trim())
    .filter((p) => p !== "");
  if (parts.length === 0) return undefined;
  const result: Record<string, unknown> = {};
  for (const part of parts) {
    const match = PAIR.exec(part);
    if (!match) return undefined;
    const [, key, value] = match as unknown as [string, string, string];
    result[key] = coerceValue(value);
  }
  return result;
}

const INTEGER = /^[+-]?\d+$/;
const FLOAT = /^[+-]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?$/;

/** `true/false` → boolean, `null/none` → null, numbers → number, quoted → the inner string. */
export function coerceValue(raw: string): unknown {
  const value = raw.trim();
  const quoted = /^(["'])(.*)\1$/s.exec(value);
  if (quoted) return quoted[2];
  const lower = value.toLowerCase();
  if (lower === "true") return true;
  if (lower === "false") return false;
  if (lower === "null" || lower === "none") return null;
  if (INTEGER.test(value)) {
    const n = Number(value);
    return Number.isSafeInteger(n) ? n : value;
  }
  if (FLOAT.test(value)) return Number(value);
  return value;
}
