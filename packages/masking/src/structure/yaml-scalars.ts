/** Scalars of the block scanner: where they are, and their value decoded only when asked. */
import { parse } from "yaml";
import type { ScalarStyle } from "../kubernetes/tree.ts";

const NULL_OR_BOOL = /^(?:~|null|Null|NULL|true|True|TRUE|false|False|FALSE)$/;
const NUMBER =
  /^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+|[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/;

/** A literal block scalar's value: its lines less their indentation, chomped as the header says. */
export function decodeLiteral(body: string, indent: number, chomp: string | undefined): string {
  const rows = body.split("\n").map((row) => {
    const line = row.endsWith("\r") ? row.slice(0, -1) : row;
    return line.length <= indent && line.trim() === "" ? "" : line.slice(Math.max(indent, 0));
  });
  const text = rows.join("\n");
  const core = text.replace(/\n+$/, "");
  if (chomp === "-" || (core === "" && chomp !== "+")) return core;
  if (chomp === "+") return text;
  return text.length > core.length ? `${core}\n` : core;
}

export function decodeWithParser(body: string, indent: number): string | null {
  const rows = body.split("\n");
  const reindented = rows
    .map((row, i) => (i === 0 ? row : `  ${row.slice(Math.max(0, indent))}`))
    .join("\n");
  const value = (parse(`k: ${reindented}`) as { k?: unknown } | null)?.k;
  return typeof value === "string" ? value : null;
}

/** A plain scalar's string value under the YAML 1.2 core schema: null for null, bool, number. */
function resolvePlain(raw: string): string | null {
  if (raw.length === 0 || NULL_OR_BOOL.test(raw) || NUMBER.test(raw)) return null;
  return raw;
}

export function decodeDouble(raw: string): string | null {
  if (!raw.includes("\\")) return raw.slice(1, -1);
  try {
    return JSON.parse(raw) as string;
  } catch {
    const value = parse(raw) as unknown;
    return typeof value === "string" ? value : null;
  }
}

/** How a scalar's value is read: from its source when asked (most values never are). */
export const QUOTED = 1;
export const PLAIN = 2;
type Decoder = typeof QUOTED | typeof PLAIN | (() => string | null) | null;

export class BlockScalar {
  readonly type = "scalar";
  readonly start: number;
  readonly end: number;
  constructor(
    private readonly source: string,
    private readonly offset: number,
    readonly style: ScalarStyle,
    start: number,
    end: number,
    private readonly decoder: Decoder,
  ) {
    this.start = start + offset;
    this.end = end + offset;
  }

  text(): string | null {
    const decoder = this.decoder;
    if (decoder === null) return null;
    if (typeof decoder === "function") return decoder();
    const raw = this.raw();
    if (decoder === PLAIN) return resolvePlain(raw);
    return this.style === "double" ? decodeDouble(raw) : raw.slice(1, -1).replaceAll("''", "'");
  }

  /** The scalar as written. */
  raw(): string {
    return this.source.slice(this.start - this.offset, this.end - this.offset);
  }
}
