import type { SourceMap, SourceNode, SourcePair, SourceScalar, SourceSeq } from "./tree.ts";

const MAX_DEPTH = 512;
const LITERAL = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y;

/** Thrown when the text is not one well-formed JSON value. */
export class JsonScanError extends Error {
  readonly code = "JSON_SCAN_ERROR" as const;
}

/**
 * Parses JSON into a source-mapped tree (offsets of every value), far faster than a YAML parser
 * on the same input. Throws JsonScanError on malformed input or trailing garbage.
 */
export function scanJson(text: string): SourceNode {
  const scanner = new Scanner(text);
  const node = scanner.value(0);
  scanner.skipWhitespace();
  if (scanner.pos !== text.length) scanner.fail("unexpected trailing content");
  return node;
}

class Scanner {
  pos = 0;
  constructor(private readonly text: string) {}

  fail(message: string): never {
    throw new JsonScanError(`${message} at offset ${this.pos}`);
  }

  skipWhitespace(): void {
    const text = this.text;
    let pos = this.pos;
    for (;;) {
      const c = text.charCodeAt(pos);
      if (c === 32 || c === 10 || c === 13 || c === 9) pos++;
      else break;
    }
    this.pos = pos;
  }

  value(depth: number): SourceNode {
    if (depth > MAX_DEPTH) this.fail("nesting too deep");
    this.skipWhitespace();
    const c = this.text.charCodeAt(this.pos);
    if (c === 123) return this.object(depth);
    if (c === 91) return this.array(depth);
    if (c === 34) return this.string();
    LITERAL.lastIndex = this.pos;
    const match = LITERAL.exec(this.text);
    if (!match) this.fail("unexpected character");
    const start = this.pos;
    this.pos += match[0].length;
    return literalNode(start, this.pos);
  }

  private object(depth: number): SourceMap {
    const start = this.pos;
    this.pos++;
    const pairs: SourcePair[] = [];
    this.skipWhitespace();
    if (this.text.charCodeAt(this.pos) === 125) {
      this.pos++;
      return { type: "map", pairs, start, end: this.pos };
    }
    for (;;) {
      this.skipWhitespace();
      if (this.text.charCodeAt(this.pos) !== 34) this.fail("expected a string key");
      const key = this.string().text() ?? "";
      this.skipWhitespace();
      if (this.text.charCodeAt(this.pos) !== 58) this.fail("expected ':'");
      this.pos++;
      pairs.push({ key, value: this.value(depth + 1) });
      this.skipWhitespace();
      const c = this.text.charCodeAt(this.pos);
      this.pos++;
      if (c === 44) continue;
      if (c === 125) return { type: "map", pairs, start, end: this.pos };
      this.pos--;
      this.fail("expected ',' or '}'");
    }
  }

  private array(depth: number): SourceSeq {
    const start = this.pos;
    this.pos++;
    const items: SourceNode[] = [];
    this.skipWhitespace();
    if (this.text.charCodeAt(this.pos) === 93) {
      this.pos++;
      return { type: "seq", items, start, end: this.pos };
    }
    for (;;) {
      items.push(this.value(depth + 1));
      this.skipWhitespace();
      const c = this.text.charCodeAt(this.pos);
      this.pos++;
      if (c === 44) continue;
      if (c === 93) return { type: "seq", items, start, end: this.pos };
      this.pos--;
      this.fail("expected ',' or ']'");
    }
  }

  private string(): SourceScalar {
    const text = this.text;
    const start = this.pos;
    let cursor = start + 1;
    let escaped = false;
    for (;;) {
      const quote = text.indexOf('"', cursor);
      if (quote === -1) this.fail("unterminated string");
      let backslashes = 0;
      for (let i = quote - 1; i > start && text.charCodeAt(i) === 92; i--) backslashes++;
      if (backslashes > 0) escaped = true;
      cursor = quote + 1;
      if (backslashes % 2 === 0) break;
    }
    if (!escaped && text.indexOf("\\", start) !== -1 && text.indexOf("\\", start) < cursor) {
      escaped = true;
    }
    this.pos = cursor;
    const end = cursor;
    return {
      type: "scalar",
      style: "json",
      start,
      end,
      text: () =>
        escaped ? (JSON.parse(text.slice(start, end)) as string) : text.slice(start + 1, end - 1),
    };
  }
}

function literalNode(start: number, end: number): SourceScalar {
  return { type: "scalar", style: "json", start, end, text: () => null };
}
