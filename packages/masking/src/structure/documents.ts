import { JsonScanError, scanJson } from "../kubernetes/json-scan.ts";
import type { SourceNode } from "../kubernetes/tree.ts";
import { parseYamlDocument } from "../kubernetes/yaml-tree.ts";
import { scanBlockYaml } from "./block-yaml.ts";

/**
 * The full YAML parser runs on a document only when the fast scanner cannot read it, and only
 * up to this size (it reads about 2 MB/s): a larger document outside the block subset is left
 * to the text rules and regex patterns.
 */
export const FULL_PARSER_LIMIT = 512 * 1024;

const DOCUMENT_SEPARATOR = /^---(?=[ \t]|\r?$)/gm;

/**
 * The documents of a tool result as source-mapped trees, one by one (offsets into `text`): one JSON value,
 * or each document of a YAML stream. Text that is neither (logs, prose, `kubectl describe`)
 * gives no tree.
 */
export function* structuredDocuments(text: string): Generator<SourceNode> {
  const first = /\S/.exec(text)?.[0];
  if (first === "{" || first === "[") {
    try {
      yield scanJson(text, "full");
      return;
    } catch (error) {
      if (!(error instanceof JsonScanError)) throw error;
    }
  }
  // One document at a time: each tree is walked and dropped before the next is built.
  for (const doc of splitDocuments(text)) {
    const root = parseYamlChunk(doc.text, doc.offset);
    if (root) yield root;
  }
}

/** One YAML document: the fast scanner, else the full parser within its size limit. */
export function parseYamlChunk(text: string, offset: number): SourceNode | null {
  const fast = scanBlockYaml(text, offset);
  if (fast.kind === "tree") return fast.root;
  if (fast.kind === "not-yaml" || text.length > FULL_PARSER_LIMIT) return null;
  return parseYamlDocument(text, offset);
}

/** Splits a YAML stream at `---` lines. */
export function splitDocuments(content: string): { text: string; offset: number }[] {
  const starts = [0];
  for (const match of content.matchAll(DOCUMENT_SEPARATOR)) {
    if (match.index > 0) starts.push(match.index);
  }
  return starts.map((start, i) => ({
    text: content.slice(start, starts[i + 1] ?? content.length),
    offset: start,
  }));
}
