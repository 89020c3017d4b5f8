import type { SourceMap, SourceNode, SourcePair, SourceScalar, SourceSeq } from "./tree.ts";

const MAX_DEPTH = 512;
const LITERAL = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y;

/** Thrown when the text is not one well-formed JSON value. */
export class JsonScanError extends Error {
  readonly code = "json_scan_error" as const;
}

/**
 * What the Secret masker needs from a value, decided by its position: resources (kind, items,
 * data, stringData, metadata), lists of resources, metadata (annotations), value maps (every
 * entry kept with its range and lazily decoded text). Everything else is skipped without
 * building nodes, which keeps large JSON outputs cheap.
 */
type Mode = "resource" | "list" | "metadata" | "values" | "leaf" | "full";

const RESOURCE_KEYS: Record<string, Mode> = {
  kind: "leaf",
  items: "list",
  data: "values",
  stringData: "values",
  metadata: "metadata",
};

/**
 * Parses JSON into a source-mapped tree: of the parts a Kubernetes resource masker needs
 * (`kubernetes`, the default), or of every value (`full`). Offsets are those of `text` plus
 * `offset`. Throws JsonScanError on malformed input or trailing content.
 */
export function scanJson(
  text: string,
  scope: "kubernetes" | "full" = "kubernetes",
  offset = 0,
): SourceNode {
  const scanner = new Scanner(text, offset);
  scanner.skipWhitespace();
  const first = text.charCodeAt(scanner.pos);
  const node = scanner.value(0, scope === "full" ? "full" : first === 91 ? "list" : "resource");
  scanner.skipWhitespace();
  if (scanner.pos !== text.length) scanner.fail("unexpected trailing content");
  return node;
}

class Scanner {
  pos = 0;
  constructor(
    private readonly text: string,
    private readonly offset: number,
  ) {}

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

  value(depth: number, mode: Mode): SourceNode {
    if (depth > MAX_DEPTH) this.fail("nesting too deep");
    this.skipWhitespace();
    const c = this.text.charCodeAt(this.pos);
    if (c === 123 && mode !== "leaf" && mode !== "list") return this.object(depth, mode);
    if (c === 91 && (mode === "list" || mode === "full")) return this.array(depth, mode);
    if (c === 34) return this.string();
    const start = this.pos;
    if (c === 123 || c === 91) this.skipContainer();
    else {
      LITERAL.lastIndex = this.pos;
      const match = LITERAL.exec(this.text);
      if (!match) this.fail("unexpected character");
      this.pos += match[0].length;
    }
    return new JsonScalar(this.text, this.offset, start, this.pos, "opaque");
  }

  private object(depth: number, mode: Mode): SourceMap {
    const start = this.pos;
    this.pos++;
    const pairs: SourcePair[] = [];
    this.skipWhitespace();
    if (this.text.charCodeAt(this.pos) === 125) {
      this.pos++;
      return { type: "map", pairs, start: start + this.offset, end: this.pos + this.offset };
    }
    for (;;) {
      this.skipWhitespace();
      if (this.text.charCodeAt(this.pos) !== 34) this.fail("expected a string key");
      const key = this.string().text() ?? "";
      this.skipWhitespace();
      if (this.text.charCodeAt(this.pos) !== 58) this.fail("expected ':'");
      this.pos++;
      const child = childMode(mode, key);
      if (child) pairs.push({ key, value: this.value(depth + 1, child) });
      else this.skipValue();
      this.skipWhitespace();
      const c = this.text.charCodeAt(this.pos);
      this.pos++;
      if (c === 44) continue;
      if (c === 125) {
        return { type: "map", pairs, start: start + this.offset, end: this.pos + this.offset };
      }
      this.pos--;
      this.fail("expected ',' or '}'");
    }
  }

  private array(depth: number, mode: Mode): SourceSeq {
    const start = this.pos;
    this.pos++;
    const items: SourceNode[] = [];
    const itemMode: Mode = mode === "full" ? "full" : "resource";
    this.skipWhitespace();
    if (this.text.charCodeAt(this.pos) === 93) {
      this.pos++;
      return { type: "seq", items, start: start + this.offset, end: this.pos + this.offset };
    }
    for (;;) {
      items.push(this.value(depth + 1, itemMode));
      this.skipWhitespace();
      const c = this.text.charCodeAt(this.pos);
      this.pos++;
      if (c === 44) continue;
      if (c === 93) {
        return { type: "seq", items, start: start + this.offset, end: this.pos + this.offset };
      }
      this.pos--;
      this.fail("expected ',' or ']'");
    }
  }

  private skipValue(): void {
    this.skipWhitespace();
    const c = this.text.charCodeAt(this.pos);
    if (c === 34) this.skipString();
    else if (c === 123 || c === 91) this.skipContainer();
    else {
      LITERAL.lastIndex = this.pos;
      const match = LITERAL.exec(this.text);
      if (!match) this.fail("unexpected character");
      this.pos += match[0].length;
    }
  }

  /** Skips a balanced object/array; only brackets and strings are checked. */
  private skipContainer(): void {
    const text = this.text;
    let depth = 0;
    while (this.pos < text.length) {
      const c = text.charCodeAt(this.pos);
      if (c === 34) {
        this.skipString();
        continue;
      }
      this.pos++;
      if (c === 123 || c === 91) depth++;
      else if (c === 125 || c === 93) {
        depth--;
        if (depth === 0) return;
      }
    }
    this.fail("unterminated object or array");
  }

  /** Advances past a string starting at `pos`; returns whether it holds escapes. */
  private skipString(): boolean {
    const text = this.text;
    const length = text.length;
    let escaped = false;
    let i = this.pos + 1;
    for (;;) {
      if (i >= length) this.fail("unterminated string");
      const c = text.charCodeAt(i);
      if (c === 34) break;
      if (c === 92) {
        escaped = true;
        i += 2;
      } else i++;
    }
    this.pos = i + 1;
    return escaped;
  }

  private string(): SourceScalar {
    const start = this.pos;
    const escaped = this.skipString();
    return new JsonScalar(this.text, this.offset, start, this.pos, escaped ? "escaped" : "string");
  }
}

function childMode(mode: Mode, key: string): Mode | undefined {
  switch (mode) {
    case "resource":
      return Object.hasOwn(RESOURCE_KEYS, key) ? RESOURCE_KEYS[key] : undefined;
    case "metadata":
      return key === "annotations" ? "values" : undefined;
    case "values":
      return "leaf";
    case "full":
      return "full";
    case "list":
    case "leaf":
      return undefined;
    default: {
      const exhaustive: never = mode;
      return exhaustive;
    }
  }
}

/** A JSON scalar; decoding is deferred to `text()` (a prototype method: no closure per node). */
class JsonScalar implements SourceScalar {
  readonly type = "scalar";
  readonly style = "json";
  readonly start: number;
  readonly end: number;
  constructor(
    private readonly source: string,
    private readonly offset: number,
    start: number,
    end: number,
    private readonly kind: "string" | "escaped" | "opaque",
  ) {
    this.start = start + offset;
    this.end = end + offset;
  }

  text(): string | null {
    if (this.kind === "opaque") return null;
    const raw = this.source.slice(this.start - this.offset, this.end - this.offset);
    return this.kind === "escaped" ? (JSON.parse(raw) as string) : raw.slice(1, -1);
  }
}
