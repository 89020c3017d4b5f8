import { MaskingInputTooDeepError } from "../errors.ts";
import type { CodeMasker, MaskOutcome } from "../masker.ts";
import { parseYamlChunk, splitDocuments } from "../structure/documents.ts";
import { encodeString } from "../structure/scalars.ts";
import { maskDataBlocksByLine } from "./fallback.ts";
import { JsonScanError, scanJson } from "./json-scan.ts";
import {
  applyEdits,
  getPair,
  getString,
  type SourceEdit,
  type SourceMap,
  type SourceNode,
} from "./tree.ts";

/** What every value of a Secret's `data` / `stringData` becomes. */
export const MASKED_SECRET_VALUE = "[MASKED_SECRET_DATA]";
/** The replacement as it is written into YAML or JSON (quoted: valid in both). */
const MASKED_LITERAL = JSON.stringify(MASKED_SECRET_VALUE);

/** `kind: Secret` / `"kind": "Secret"` as a mapping entry (block or flow), not in prose. */
const SECRET_KIND =
  /(?:^[ \t-]*|[{,][ \t]*)["']?kind["']?[ \t]*:[ \t]*["']?Secret(?:List)?["']?[ \t]*(?:[,}]|#[^\r\n]*|\r?$)/m;
const SECRET_KIND_IN_JSON = /"kind"\s*:\s*"Secret"/;
const ESCAPED_JSON_SECRET_KIND = /\\"kind\\"\s*:\s*\\"Secret\\"/;
const LAST_APPLIED_HINT = "Secret";

/**
 * Masks the `data` and `stringData` values of Kubernetes Secrets (kind Secret, and Secrets in the
 * items of a List / SecretList, Lists nested in Lists included, up to MAX_LIST_DEPTH) in YAML
 * (multi-document) or JSON, including a Secret held as JSON in an annotation such as
 * `kubectl.kubernetes.io/last-applied-configuration`. Keys are kept, other kinds (ConfigMap, …)
 * are untouched, and only the masked values change in the text: everything else keeps its
 * original formatting. In a document that mentions a Secret but does not parse,
 * every value under a `data:` / `stringData:` block is masked line by line instead.
 */
export function createKubernetesSecretMasker(): CodeMasker {
  return {
    name: "kubernetes_secret",
    appliesTo: mayHoldSecret,
    mask: maskKubernetesSecrets,
  };
}

export function maskKubernetesSecrets(content: string): MaskOutcome {
  const edits: SourceEdit[] = [];
  const counter = { redactions: 0 };

  const first = firstNonSpace(content);
  if (first === "{" || first === "[") {
    const root = tryScanJson(content);
    if (root) {
      collectDocument(root, content, edits, counter);
      return { content: applyEdits(content, edits), redactions: counter.redactions };
    }
  }

  for (const chunk of yamlChunks(content)) {
    const root = parseYamlChunk(chunk.text, chunk.offset);
    if (root) collectDocument(root, content, edits, counter);
    else counter.redactions += maskDataBlocksByLine(chunk.text, chunk.offset, edits);
  }
  return { content: applyEdits(content, edits), redactions: counter.redactions };
}

interface Counter {
  redactions: number;
}

/** How deep to look for resources inside wrappers (a titled YAML map, a bare array, …). */
const MAX_WRAPPER_DEPTH = 4;

function collectDocument(
  node: SourceNode,
  source: string,
  edits: SourceEdit[],
  counter: Counter,
  depth = 0,
) {
  if (depth > MAX_WRAPPER_DEPTH) return;
  if (node.type === "seq") {
    for (const item of node.items) collectDocument(item, source, edits, counter, depth + 1);
  } else if (node.type === "map") {
    if (getPair(node, "kind") !== undefined) {
      collectResource(node, source, edits, counter);
      return;
    }
    // Not a resource: maybe a wrapper such as "The following resources were found:\n- kind: …".
    for (const pair of node.pairs) {
      if (pair.value && pair.value.type !== "scalar") {
        collectDocument(pair.value, source, edits, counter, depth + 1);
      }
    }
  }
}

/**
 * How deep Lists may nest inside Lists (tools that aggregate several `get` calls print a List
 * of SecretLists / Lists: 2–3 levels). A Secret below the bound is never let through: masking
 * throws MaskingInputTooDeepError instead (tool results then fail closed).
 */
export const MAX_LIST_DEPTH = 32;

/** Masks a Secret, or every Secret found in the `items` of a List / SecretList, at any depth. */
function collectResource(
  resource: SourceMap,
  source: string,
  edits: SourceEdit[],
  counter: Counter,
  depth = 0,
) {
  const kind = getString(resource, "kind");
  if (kind === "Secret") {
    maskSecret(resource, edits, counter);
    maskAnnotations(resource, source, edits, counter);
    return;
  }
  if (!kind?.endsWith("List")) return;
  const items = getPair(resource, "items");
  if (items?.type !== "seq") return;
  for (const item of items.items) {
    if (item.type !== "map") continue;
    if (depth + 1 > MAX_LIST_DEPTH) {
      if (mayHoldSecret(source.slice(item.start, item.end))) {
        throw new MaskingInputTooDeepError(MAX_LIST_DEPTH);
      }
      continue;
    }
    collectResource(item, source, edits, counter, depth + 1);
  }
}

function maskSecret(secret: SourceMap, edits: SourceEdit[], counter: Counter) {
  for (const field of ["data", "stringData"]) {
    const values = getPair(secret, field);
    if (values?.type !== "map") continue;
    for (const pair of values.pairs) {
      const value = pair.value;
      if (!value || isNullScalar(value) || isMaskedScalar(value)) continue;
      edits.push({ start: value.start, end: value.end, replacement: MASKED_LITERAL });
      counter.redactions += 1;
    }
  }
}

/** Masks a Secret serialized as JSON inside an annotation (last-applied-configuration). */
function maskAnnotations(secret: SourceMap, source: string, edits: SourceEdit[], counter: Counter) {
  const metadata = getPair(secret, "metadata");
  if (metadata?.type !== "map") return;
  const annotations = getPair(metadata, "annotations");
  if (annotations?.type !== "map") return;
  for (const pair of annotations.pairs) {
    const node = pair.value;
    if (node?.type !== "scalar") continue;
    const value = node.text();
    if (!value?.includes(LAST_APPLIED_HINT)) continue;
    const embedded = parseJsonObject(value);
    if (!embedded && SECRET_KIND_IN_JSON.test(value)) {
      // A Secret we cannot parse (cut off, not JSON): drop the whole annotation value.
      edits.push({ start: node.start, end: node.end, replacement: MASKED_LITERAL });
      counter.redactions += 1;
      continue;
    }
    if (embedded?.kind !== "Secret") continue;
    const masked = maskSecretObject(embedded);
    if (masked === 0) continue;
    counter.redactions += masked;
    edits.push({
      start: node.start,
      end: node.end,
      replacement: encodeString(
        node,
        source,
        JSON.stringify(embedded) + (value.endsWith("\n") && node.style !== "block" ? "\n" : ""),
      ),
    });
  }
}

function maskSecretObject(secret: Record<string, unknown>): number {
  let masked = 0;
  for (const field of ["data", "stringData"]) {
    const values = secret[field];
    if (!values || typeof values !== "object" || Array.isArray(values)) continue;
    const record = values as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const value = record[key];
      if (value === null || (typeof value === "string" && value.startsWith("[MASKED_"))) continue;
      record[key] = MASKED_SECRET_VALUE;
      masked += 1;
    }
  }
  return masked;
}

/** Already masked (masking twice changes nothing and counts nothing). */
function isMaskedScalar(node: SourceNode): boolean {
  return node.type === "scalar" && node.text()?.startsWith("[MASKED_") === true;
}

function isNullScalar(node: SourceNode): boolean {
  return node.type === "scalar" && node.text() === null && node.end === node.start;
}

function parseJsonObject(value: string): Record<string, unknown> | null {
  try {
    const parsed: unknown = JSON.parse(value);
    return parsed && typeof parsed === "object" && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

function tryScanJson(content: string): SourceNode | null {
  try {
    return scanJson(content);
  } catch (error) {
    if (error instanceof JsonScanError) return null;
    throw error;
  }
}

function mayHoldSecret(text: string): boolean {
  return text.includes("Secret") && (SECRET_KIND.test(text) || ESCAPED_JSON_SECRET_KIND.test(text));
}

/**
 * The pieces of a YAML stream worth parsing: documents that mention a Secret and, inside a
 * kubectl-style List, only the items that do (YAML parsing is the expensive part).
 */
function* yamlChunks(content: string): Generator<{ text: string; offset: number }> {
  for (const doc of splitDocuments(content)) {
    if (!mayHoldSecret(doc.text)) continue;
    const items = splitListItems(doc.text);
    if (!items) {
      yield doc;
      continue;
    }
    for (const item of items) {
      if (mayHoldSecret(item.text)) yield { text: item.text, offset: doc.offset + item.offset };
    }
  }
}

const LIST_KIND = /^kind:[ \t]*["']?[A-Za-z]*List["']?[ \t]*\r?$/m;
const ITEMS_KEY = /^items:[ \t]*\r?\n/m;

/**
 * Splits the `items:` block of a top-level List document into one chunk per item (each chunk
 * is a one-element YAML sequence). Returns null when the document is not laid out that way.
 */
function splitListItems(doc: string): { text: string; offset: number }[] | null {
  if (!LIST_KIND.test(doc)) return null;
  const itemsKey = ITEMS_KEY.exec(doc);
  if (!itemsKey) return null;
  let cursor = itemsKey.index + itemsKey[0].length;
  const indent = /^( *)- /.exec(doc.slice(cursor, cursor + 200))?.[1];
  if (indent === undefined) return null;
  const marker = `${indent}- `;
  const starts: number[] = [];
  let end = doc.length;
  while (cursor < doc.length) {
    const lineEnd = doc.indexOf("\n", cursor);
    const next = lineEnd === -1 ? doc.length : lineEnd + 1;
    if (doc.startsWith(marker, cursor)) starts.push(cursor);
    else if (!isInsideItem(doc, cursor, next, indent.length)) {
      end = cursor;
      break;
    }
    cursor = next;
  }
  return starts.map((start, i) => ({
    text: doc.slice(start, starts[i + 1] ?? end),
    offset: start,
  }));
}

/** A line that continues the current item: blank, a comment, or indented deeper than `- `. */
function isInsideItem(doc: string, start: number, end: number, indent: number): boolean {
  let spaces = 0;
  while (start + spaces < end && doc.charCodeAt(start + spaces) === 32) spaces++;
  const rest = doc.slice(start + spaces, end).trim();
  return rest === "" || rest.startsWith("#") || spaces > indent;
}

function firstNonSpace(content: string): string | undefined {
  return /\S/.exec(content)?.[0];
}
