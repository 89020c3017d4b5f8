/**
 * A minimal source-mapped document tree shared by the JSON scanner and the YAML adapter, so the
 * Secret logic is written once and edits can be applied to the original text by offset.
 */
export type SourceNode = SourceMap | SourceSeq | SourceScalar;

interface Ranged {
  /** Offset of the first character of the node in the source text. */
  readonly start: number;
  /** Offset just past the node (trailing line breaks excluded). */
  readonly end: number;
}

export interface SourceMap extends Ranged {
  readonly type: "map";
  readonly pairs: readonly SourcePair[];
}

export interface SourcePair {
  readonly key: string;
  readonly value: SourceNode | null;
}

export interface SourceSeq extends Ranged {
  readonly type: "seq";
  readonly items: readonly SourceNode[];
}

export type ScalarStyle = "json" | "plain" | "single" | "double" | "block";

export interface SourceScalar extends Ranged {
  readonly type: "scalar";
  readonly style: ScalarStyle;
  /** The decoded value; strings only, other scalars are `null`. */
  text(): string | null;
}

/** A replacement of `[start, end)` of the source text. */
export interface SourceEdit {
  start: number;
  end: number;
  replacement: string;
}

export function getPair(map: SourceMap, key: string): SourceNode | null | undefined {
  for (const pair of map.pairs) if (pair.key === key) return pair.value;
  return undefined;
}

export function getString(map: SourceMap, key: string): string | null {
  const value = getPair(map, key);
  return value?.type === "scalar" ? value.text() : null;
}

/** Applies non-overlapping edits to `text`. */
export function applyEdits(text: string, edits: readonly SourceEdit[]): string {
  if (edits.length === 0) return text;
  const sorted = [...edits].sort((a, b) => a.start - b.start);
  let out = "";
  let cursor = 0;
  for (const edit of sorted) {
    if (edit.start < cursor) continue;
    out += text.slice(cursor, edit.start) + edit.replacement;
    cursor = edit.end;
  }
  return out + text.slice(cursor);
}
