import { isAlias, isMap, isScalar, isSeq, type Node, parseDocument, type Scalar } from "yaml";
import type { ScalarStyle, SourceNode, SourcePair, SourceScalar } from "./tree.ts";

/**
 * Parses one YAML document (a slice of a larger text starting at `offset`) into a
 * source-mapped tree. Returns null when the document does not parse cleanly: the caller then
 * leaves it to the regex patterns.
 */
export function parseYamlDocument(text: string, offset: number): SourceNode | null {
  const doc = parseDocument(text, { prettyErrors: false, uniqueKeys: false, strict: false });
  if (doc.errors.length > 0 || !doc.contents) return null;
  return convert(doc.contents as Node, text, offset);
}

function convert(node: Node, text: string, offset: number): SourceNode | null {
  const range = node.range;
  if (!range) return null;
  const start = range[0] + offset;
  const end = trimEnd(text, range[0], range[1]) + offset;
  if (isMap(node)) {
    const pairs: SourcePair[] = [];
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : null;
      if (key === null) continue;
      const value = pair.value ? convert(pair.value as Node, text, offset) : null;
      pairs.push({ key, value });
    }
    return { type: "map", pairs, start, end };
  }
  if (isSeq(node)) {
    const items: SourceNode[] = [];
    for (const item of node.items) {
      const converted = item ? convert(item as Node, text, offset) : null;
      if (converted) items.push(converted);
    }
    return { type: "seq", items, start, end };
  }
  if (isScalar(node)) {
    const value = (node as Scalar).value;
    return new YamlScalar(
      scalarStyle(node as Scalar),
      start,
      end,
      typeof value === "string" ? value : null,
    );
  }
  if (isAlias(node)) return new YamlScalar("plain", start, end, null);
  return null;
}

class YamlScalar implements SourceScalar {
  readonly type = "scalar";
  constructor(
    readonly style: ScalarStyle,
    readonly start: number,
    readonly end: number,
    private readonly value: string | null,
  ) {}

  text(): string | null {
    return this.value;
  }
}

function scalarStyle(node: Scalar): ScalarStyle {
  switch (node.type) {
    case "QUOTE_DOUBLE":
      return "double";
    case "QUOTE_SINGLE":
      return "single";
    case "BLOCK_LITERAL":
    case "BLOCK_FOLDED":
      return "block";
    default:
      return "plain";
  }
}

/** Moves `end` back over trailing whitespace and line breaks (block nodes include them). */
function trimEnd(text: string, start: number, end: number): number {
  let cursor = end;
  while (cursor > start) {
    const c = text.charCodeAt(cursor - 1);
    if (c === 10 || c === 13 || c === 32 || c === 9) cursor--;
    else break;
  }
  return cursor;
}
