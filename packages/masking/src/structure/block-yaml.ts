import { JsonScanError, scanJson } from "../kubernetes/json-scan.ts";
import type { SourceMap, SourceNode, SourcePair, SourceSeq } from "../kubernetes/tree.ts";
import { COMMENT, EMPTY, indexInLine, Lines, plainEnd, TAB } from "./yaml-lines.ts";
import {
  BlockScalar,
  decodeDouble,
  decodeLiteral,
  decodeWithParser,
  PLAIN,
  QUOTED,
} from "./yaml-scalars.ts";

/**
 * A fast scanner for block-style YAML: the subset that kubectl, helm and most tools print
 * (block maps and sequences, plain and quoted one-line scalars, literal and folded block
 * scalars, one-line JSON-compatible flow collections, comments). It builds the same
 * source-mapped tree as the full YAML parser, roughly ten times faster, and says so when a
 * document leaves the subset (anchors, tags, multi-line flow or quoted scalars, complex
 * keys …): the caller then uses the full parser. `not-yaml` means the text is no mapping or
 * sequence at all (logs, prose), which no parser would turn into structure worth masking.
 */
export type BlockYamlResult =
  | { kind: "tree"; root: SourceNode }
  | { kind: "not-yaml" }
  | { kind: "unsupported" };

export function scanBlockYaml(text: string, offset = 0): BlockYamlResult {
  try {
    const root = new BlockScanner(text, offset).document();
    return root ? { kind: "tree", root } : { kind: "not-yaml" };
  } catch (error) {
    if (error instanceof Unsupported) return { kind: "unsupported" };
    throw error;
  }
}

class Unsupported extends Error {}

/** A first character after which the document may still be a collection, of another syntax. */
const ROOT_INDICATORS = "&*!?%@";
const BLOCK_HEADER = /^[|>][+-]?(?:[ \t]+#.*)?$/;
class BlockScanner {
  private readonly lines: Lines;
  /** The current line. */
  private index = 0;
  /** Where the value of the key last read by `keyAt` starts. */
  private valuePos = 0;

  constructor(
    private readonly text: string,
    private readonly offset: number,
  ) {
    this.lines = new Lines(text);
  }

  private has(l: number): boolean {
    return l < this.lines.count;
  }

  private lineStart(l: number): number {
    return this.lines.start[l] as number;
  }

  private indentOf(l: number): number {
    return this.lines.indent[l] as number;
  }

  private lineEnd(l: number): number {
    return this.lines.end[l] as number;
  }

  private content(l: number): number {
    return this.lineStart(l) + this.indentOf(l);
  }

  private tab(l: number): boolean {
    return ((this.lines.flags[l] as number) & TAB) !== 0;
  }

  private empty(l: number): boolean {
    return ((this.lines.flags[l] as number) & EMPTY) !== 0;
  }

  document(): SourceNode | null {
    this.skipBlank();
    if (!this.has(this.index)) return null;
    const content = this.content(this.index);
    if (this.text.charCodeAt(content) === 37) throw new Unsupported(); // %YAML directive
    if (this.startsWithMarker(content, "---")) {
      if (this.restIsBlank(content + 3, this.lineEnd(this.index))) this.index++;
      else throw new Unsupported();
      this.skipBlank();
    }
    const line = this.index;
    if (!this.has(line)) return null;
    if (this.tab(line)) throw new Unsupported();
    const pos = this.content(line);
    let root: SourceNode;
    if (this.isSeqItem(line)) root = this.sequence(this.indentOf(line));
    else if (this.keyAt(pos, this.lineEnd(line)) !== null)
      root = this.map(this.indentOf(line), pos);
    else if (this.text[pos] === "{" || this.text[pos] === "[") root = this.scalar(pos, line, -1);
    else if (ROOT_INDICATORS.includes(this.text[pos] ?? "")) throw new Unsupported();
    else return null;
    this.skipBlank();
    if (this.has(this.index) && !this.startsWithMarker(this.content(this.index), "...")) {
      throw new Unsupported();
    }
    return root;
  }

  // ---- structure -------------------------------------------------------------------------

  private map(column: number, firstPos: number): SourceMap {
    const pairs: SourcePair[] = [];
    let pos = firstPos;
    const start = firstPos;
    let end = firstPos;
    for (;;) {
      const line = this.index;
      const key = this.keyAt(pos, this.lineEnd(line));
      if (key === null) throw new Unsupported();
      const valuePos = this.valuePos;
      const value = this.valueAfter(valuePos, line, column);
      pairs.push({ key, value });
      end = Math.max(end, value.end - this.offset, valuePos);
      this.skipBlank();
      const next = this.index;
      if (!this.has(next) || this.indentOf(next) < column || this.isDocumentMarker(next)) break;
      if (this.indentOf(next) === column && this.isSeqItem(next)) break;
      if (this.tab(next) || this.indentOf(next) > column) throw new Unsupported();
      pos = this.content(next);
    }
    return { type: "map", pairs, start: start + this.offset, end: end + this.offset };
  }

  /** A block sequence at `column`; its first dash may sit inside the line (`- - x`). */
  private sequence(column: number, firstDash?: number): SourceSeq {
    const items: SourceNode[] = [];
    const start = firstDash ?? this.content(this.index);
    let end = start + 1;
    let dash = start;
    for (;;) {
      const line = this.index;
      const lineEnd = this.lineEnd(line);
      let pos = dash + 1;
      while (pos < lineEnd && this.text.charCodeAt(pos) === 32) pos++;
      let item: SourceNode;
      if (pos >= lineEnd || this.text.charCodeAt(pos) === 35) {
        this.index++;
        item = this.nodeBelow(column, dash + 1);
      } else if (this.isSeqStart(pos, lineEnd)) {
        item = this.sequence(pos - this.lineStart(line), pos);
      } else if (this.keyAt(pos, lineEnd) !== null) {
        item = this.map(pos - this.lineStart(line), pos);
      } else {
        item = this.scalar(pos, line, column);
      }
      items.push(item);
      end = Math.max(item.end - this.offset, dash + 1);
      this.skipBlank();
      const next = this.index;
      if (!this.has(next) || this.indentOf(next) < column) break;
      if (this.indentOf(next) === column && this.isSeqItem(next) && !this.tab(next)) {
        dash = this.content(next);
        continue;
      }
      if (this.indentOf(next) === column && !this.isSeqItem(next)) break;
      if (this.isDocumentMarker(next)) break;
      throw new Unsupported();
    }
    return { type: "seq", items, start: start + this.offset, end: end + this.offset };
  }

  /** The value of a key whose text starts at `pos` on `line` (the owner is at `column`). */
  private valueAfter(pos: number, line: number, column: number): SourceNode {
    if (pos >= this.lineEnd(line) || this.text.charCodeAt(pos) === 35) {
      this.index++;
      this.skipBlank();
      const next = this.index;
      if (
        this.has(next) &&
        !this.tab(next) &&
        this.indentOf(next) === column &&
        this.isSeqItem(next)
      ) {
        return this.sequence(column);
      }
      return this.nodeBelow(column, pos);
    }
    return this.scalar(pos, line, column);
  }

  /** A node on the lines after the current one, indented deeper than `column`; else null. */
  private nodeBelow(column: number, emptyAt: number): SourceNode {
    this.skipBlank();
    const line = this.index;
    if (!this.has(line) || this.indentOf(line) <= column || this.isDocumentMarker(line)) {
      return new BlockScalar(this.text, this.offset, "plain", emptyAt, emptyAt, null);
    }
    if (this.tab(line)) throw new Unsupported();
    const pos = this.content(line);
    if (this.isSeqItem(line)) return this.sequence(this.indentOf(line));
    if (this.keyAt(pos, this.lineEnd(line)) !== null) return this.map(this.indentOf(line), pos);
    return this.scalar(pos, line, column);
  }

  /** A scalar (or one-line flow collection) starting at `pos`; consumes its lines. */
  private scalar(pos: number, line: number, column: number): SourceNode {
    const text = this.text;
    const c = text.charCodeAt(pos);
    const lineEnd = this.lineEnd(line);
    let node: SourceNode;
    if (c === 124 || c === 62) return this.blockScalar(pos, line, column);
    if (c === 34 || c === 39) {
      const close = c === 34 ? this.closeDouble(pos, lineEnd) : this.closeSingle(pos, lineEnd);
      if (close === -1 || !this.restIsBlank(close, lineEnd)) throw new Unsupported();
      node = new BlockScalar(text, this.offset, c === 34 ? "double" : "single", pos, close, QUOTED);
    } else if (c === 123 || c === 91) {
      const end = this.flowEnd(pos, lineEnd);
      try {
        node = scanJson(text.slice(pos, end), "full", pos + this.offset);
      } catch (error) {
        if (error instanceof JsonScanError) throw new Unsupported();
        throw error;
      }
    } else {
      if (c === 38 || c === 42 || c === 33 || c === 37 || c === 64 || c === 96) {
        throw new Unsupported(); // anchor, alias, tag, reserved
      }
      if (c === 45 && (pos + 1 >= lineEnd || text.charCodeAt(pos + 1) === 32)) {
        throw new Unsupported();
      }
      const end = plainEnd(text, pos, lineEnd);
      // `a: b` inside a plain value, or a value ending in `:`, is a YAML error.
      if (indexInLine(text, ": ", pos, end) !== -1 || text.charCodeAt(end - 1) === 58) {
        throw new Unsupported();
      }
      node = new BlockScalar(text, this.offset, "plain", pos, end, PLAIN);
    }
    this.index++;
    this.skipBlank();
    const next = this.index;
    // A deeper line after a one-line scalar continues it (multi-line plain): not in the subset.
    if (this.has(next) && this.indentOf(next) > column && !this.isDocumentMarker(next)) {
      throw new Unsupported();
    }
    return node;
  }

  private blockScalar(pos: number, line: number, column: number): SourceNode {
    const header = this.text.slice(pos, this.lineEnd(line));
    if (!BLOCK_HEADER.test(header)) throw new Unsupported();
    let end = this.lineEnd(line);
    let contentIndent = -1;
    let resume = this.index + 1;
    let decodeEnd = this.text.length;
    let widestBlank = 0;
    for (let i = this.index + 1; i < this.lines.count; i++) {
      if (this.empty(i)) {
        // A blank line holding a tab may be content: left to the full parser.
        const lineEnd = this.has(i + 1) ? this.lineStart(i + 1) - 1 : this.text.length;
        const raw = this.text.slice(this.lineStart(i), lineEnd);
        if (raw.includes("\t")) throw new Unsupported();
        widestBlank = Math.max(widestBlank, raw.replace(/\r$/, "").length);
        continue;
      }
      const indent = this.indentOf(i);
      if (indent <= column) {
        decodeEnd = this.lineStart(i);
        break;
      }
      if (contentIndent === -1) contentIndent = indent;
      else if (indent < contentIndent) throw new Unsupported();
      end = this.lineEnd(i);
      resume = i + 1;
    }
    this.index = resume;
    // Spaces beyond the indentation on a blank line are content: left to the full parser.
    if (widestBlank > Math.max(contentIndent, 0)) throw new Unsupported();
    const source = this.text;
    const bodyStart = this.has(line + 1) ? this.lineStart(line + 1) : 0;
    const decode = () =>
      header[0] === "|" && bodyStart > 0
        ? decodeLiteral(source.slice(bodyStart, decodeEnd), contentIndent, header[1])
        : decodeWithParser(source.slice(pos, decodeEnd), contentIndent);
    return new BlockScalar(source, this.offset, "block", pos, end, decode);
  }

  // ---- lexical helpers -------------------------------------------------------------------

  /** A `key:` at `pos` (plain or quoted, one line): its text; `valuePos` is set to its value. */
  private keyAt(pos: number, lineEnd: number): string | null {
    const text = this.text;
    const c = text.charCodeAt(pos);
    let keyEnd: number;
    let key: string;
    if (c === 34 || c === 39) {
      const close = c === 34 ? this.closeDouble(pos, lineEnd) : this.closeSingle(pos, lineEnd);
      if (close === -1) return null;
      let colon = close;
      while (colon < lineEnd && text.charCodeAt(colon) === 32) colon++;
      if (text.charCodeAt(colon) !== 58) return null;
      const after = text.charCodeAt(colon + 1);
      if (colon + 1 < lineEnd && after !== 32) return null;
      const raw = text.slice(pos, close);
      const decoded = c === 34 ? decodeDouble(raw) : raw.slice(1, -1).replaceAll("''", "'");
      if (decoded === null) throw new Unsupported();
      key = decoded;
      keyEnd = colon + 1;
    } else {
      if (c === 63 || c === 38 || c === 42 || c === 33 || c === 124 || c === 62) return null;
      if (c === 37 || c === 64 || c === 96 || c === 123 || c === 91 || c === 35) return null;
      if (c === 45 && (pos + 1 >= lineEnd || text.charCodeAt(pos + 1) === 32)) return null;
      let colon = indexInLine(text, ":", pos, lineEnd);
      for (;;) {
        if (colon === -1) return null;
        const after = text.charCodeAt(colon + 1);
        if (colon + 1 >= lineEnd || after === 32) break;
        colon = indexInLine(text, ":", colon + 1, lineEnd);
      }
      const raw = text.slice(pos, colon).trimEnd();
      if (raw.length === 0 || raw.includes(" #") || raw === "<<") return null;
      key = raw;
      keyEnd = colon + 1;
    }
    let valuePos = keyEnd;
    while (valuePos < lineEnd && text.charCodeAt(valuePos) === 32) valuePos++;
    if (valuePos < lineEnd && text.charCodeAt(valuePos) === 9) throw new Unsupported();
    this.valuePos = valuePos;
    return key;
  }

  private closeDouble(pos: number, lineEnd: number): number {
    const text = this.text;
    for (let i = pos + 1; i < lineEnd; i++) {
      const c = text.charCodeAt(i);
      if (c === 92) i++;
      else if (c === 34) return i + 1;
    }
    return -1;
  }

  private closeSingle(pos: number, lineEnd: number): number {
    const text = this.text;
    for (let i = pos + 1; i < lineEnd; i++) {
      if (text.charCodeAt(i) !== 39) continue;
      if (text.charCodeAt(i + 1) === 39) i++;
      else return i + 1;
    }
    return -1;
  }

  /** End of a one-line flow collection: the line without a trailing comment. */
  private flowEnd(pos: number, lineEnd: number): number {
    const hash = indexInLine(this.text, " #", pos, lineEnd);
    if (hash !== -1) {
      const closer = this.text[pos] === "{" ? 125 : 93;
      for (let close = hash - 1; close > pos; close--) {
        if (this.text.charCodeAt(close) === closer) return close + 1;
      }
    }
    return lineEnd;
  }

  private restIsBlank(from: number, lineEnd: number): boolean {
    let i = from;
    while (i < lineEnd && this.text.charCodeAt(i) === 32) i++;
    return i >= lineEnd || (this.text.charCodeAt(i) === 35 && i > from);
  }

  private isSeqItem(line: number): boolean {
    return this.isSeqStart(this.content(line), this.lineEnd(line));
  }

  private isSeqStart(pos: number, lineEnd: number): boolean {
    if (this.text.charCodeAt(pos) !== 45) return false;
    return pos + 1 >= lineEnd || this.text.charCodeAt(pos + 1) === 32;
  }

  private startsWithMarker(pos: number, marker: string): boolean {
    if (!this.text.startsWith(marker, pos)) return false;
    const after = this.text.charCodeAt(pos + 3);
    return Number.isNaN(after) || after === 32 || after === 10 || after === 13 || after === 9;
  }

  private isDocumentMarker(line: number): boolean {
    if (this.indentOf(line) !== 0) return false;
    const start = this.lineStart(line);
    return this.startsWithMarker(start, "---") || this.startsWithMarker(start, "...");
  }

  private skipBlank(): void {
    const { flags, count } = this.lines;
    while (this.index < count && ((flags[this.index] as number) & (EMPTY | COMMENT)) !== 0) {
      this.index++;
    }
  }
}
