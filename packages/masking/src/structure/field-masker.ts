import { JsonScanError, scanJson } from "../kubernetes/json-scan.ts";
import {
  applyEdits,
  getPair,
  type SourceEdit,
  type SourceMap,
  type SourceNode,
  type SourceScalar,
  type SourceSeq,
} from "../kubernetes/tree.ts";
import type { CodeMasker, MaskOutcome, NestedMasker } from "../masker.ts";
import { structuredDocuments } from "./documents.ts";
import { isSecretName, secretFlagName } from "./names.ts";
import { encodeString } from "./scalars.ts";

/** What a value masked by its structure becomes. */
export const MASKED_FIELD_VALUE = "[MASKED_SECRET]";
const MASKED_LITERAL = JSON.stringify(MASKED_FIELD_VALUE);

/** How deep JSON held in a string (held in a string …) is followed. */
const MAX_EMBEDDED_DEPTH = 4;
/** How deep a tree is walked; deeper values are left to the text rules. */
const MAX_WALK_DEPTH = 256;

const NULL_OR_BOOL = /^(?:~|null|Null|NULL|true|True|TRUE|false|False|FALSE)$/;
const ASSIGNMENT = /^(--?[A-Za-z][A-Za-z0-9_.-]*|[A-Za-z_][A-Za-z0-9_.-]*)=([\s\S]+)$/;

/**
 * Masks secrets by the structure of JSON and YAML tool output: the value of every key that
 * names a secret (`password`, `apiKey`, `client-key-data`, `Authorization`, …), the element
 * after a secret-bearing flag in any array (`["--token", "…"]`), `--flag=value` and
 * `NAME=value` elements (`docker inspect` Env), the `value` of every `{name, value}` item whose
 * name is secret (container env), and the same inside JSON held in a string (last-applied
 * annotations). Only the masked values change in the text.
 */
export function createStructuredSecretMasker(): CodeMasker {
  return {
    name: "structured_secrets",
    appliesTo: (content) => content.length > 0,
    mask: maskStructuredSecrets,
  };
}

export function maskStructuredSecrets(content: string, nested?: NestedMasker): MaskOutcome {
  const walker = new Walker(content, 0, nested);
  for (const root of structuredDocuments(content)) walker.node(root, 0);
  return { content: applyEdits(content, walker.edits), redactions: walker.redactions };
}

class Walker {
  readonly edits: SourceEdit[] = [];
  redactions = 0;

  constructor(
    private readonly source: string,
    private readonly embedded: number,
    private readonly nested: NestedMasker | undefined,
  ) {}

  node(node: SourceNode, depth: number): void {
    if (depth > MAX_WALK_DEPTH) return;
    if (node.type === "map") this.map(node, depth);
    else if (node.type === "seq") this.seq(node, depth);
    else this.embeddedDocument(node);
  }

  private map(map: SourceMap, depth: number): void {
    const name = getPair(map, "name");
    const envValue = getPair(map, "value");
    const envSecret =
      name?.type === "scalar" && envValue?.type === "scalar" && isSecretName(name.text() ?? "");
    for (const pair of map.pairs) {
      const value = pair.value;
      if (!value) continue;
      if (value.type !== "scalar") {
        this.node(value, depth + 1);
      } else if ((envSecret && value === envValue) || isSecretKey(pair.key)) {
        this.maskValue(value);
      } else {
        this.embeddedDocument(value);
      }
    }
  }

  private seq(seq: SourceSeq, depth: number): void {
    const items = seq.items;
    for (let i = 0; i < items.length; i++) {
      const item = items[i] as SourceNode;
      if (item.type !== "scalar") {
        this.node(item, depth + 1);
        continue;
      }
      const text = item.text();
      if (text === null) continue;
      const next = items[i + 1];
      if (secretFlagName(text) && next?.type === "scalar" && !startsWithDash(next)) {
        this.maskValue(next);
        i++;
        continue;
      }
      const assignment = ASSIGNMENT.exec(text);
      const key = assignment?.[1];
      if (key && isSecretName(key.replace(/^-+/, "")) && !isMasked(assignment[2] ?? "")) {
        this.replace(item, encodeString(item, this.source, `${key}=${MASKED_FIELD_VALUE}`));
        continue;
      }
      this.embeddedDocument(item);
    }
  }

  /**
   * A string holding a document (JSON in an annotation, YAML or a log in a JSON field): masked
   * inside with the whole plan when there is one (else its JSON by structure), and written
   * back in the string's own style.
   */
  private embeddedDocument(scalar: SourceScalar): void {
    if (!mayHoldDocument(this.source, scalar)) return;
    const text = scalar.text();
    if (text === null || isPlaceholder(text)) return;
    if (this.nested) {
      const outcome = this.nested(text);
      if (outcome.redactions === 0) return;
      this.edits.push({
        start: scalar.start,
        end: scalar.end,
        replacement: encodeString(scalar, this.source, outcome.content),
      });
      return;
    }
    if (this.embedded >= MAX_EMBEDDED_DEPTH) return;
    const first = /\S/.exec(text)?.[0];
    if (first !== "{" && first !== "[") return;
    let root: SourceNode;
    try {
      root = scanJson(text, "full");
    } catch (error) {
      if (error instanceof JsonScanError) return;
      throw error;
    }
    const inner = new Walker(text, this.embedded + 1, undefined);
    inner.node(root, 0);
    if (inner.redactions === 0) return;
    this.redactions += inner.redactions;
    this.edits.push({
      start: scalar.start,
      end: scalar.end,
      replacement: encodeString(scalar, this.source, applyEdits(text, inner.edits)),
    });
  }

  private maskValue(scalar: SourceScalar): void {
    if (scalar.start === scalar.end) return;
    const text = scalar.text();
    if (text === null) {
      const raw = this.source.slice(scalar.start, scalar.end);
      if (NULL_OR_BOOL.test(raw)) return;
    } else if (text.trim() === "" || isPlaceholder(text)) {
      return;
    }
    this.replace(scalar, MASKED_LITERAL);
  }

  private replace(scalar: SourceScalar, replacement: string): void {
    this.edits.push({ start: scalar.start, end: scalar.end, replacement });
    this.redactions += 1;
  }
}

/** A key judged by its name; a key with spaces is prose (`ticket token: …`), left to the text rules. */
function isSecretKey(key: string): boolean {
  return !/\s/.test(key) && isSecretName(key);
}

function isMasked(text: string): boolean {
  return text.startsWith("[MASKED_") || text.startsWith("[REDACTED");
}

/**
 * Already masked, or a reference rather than a value: `<set to the key …>`, `${VAR}`,
 * `$(VAR)`, a path built on a variable (`${user.home}/.ssh/id_rsa`).
 */
export function isPlaceholder(value: string): boolean {
  return (
    isMasked(value) ||
    value.startsWith("<") ||
    /^\$\{[\w.]+\}\/[\w.\-/]*$/.test(value) ||
    /^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$/.test(value) ||
    /^\$\([A-Za-z_][A-Za-z0-9_]*\)$/.test(value)
  );
}

function startsWithDash(node: SourceScalar): boolean {
  return node.text()?.startsWith("-") === true;
}

/** Cheap look at the raw scalar: could it hold a document (JSON, or several lines)? */
function mayHoldDocument(source: string, scalar: SourceScalar): boolean {
  const length = scalar.end - scalar.start;
  if (length < 8) return false;
  if (scalar.style === "block") return true;
  if (scalar.style === "plain") return false;
  if (/^(?:\\?["'])\s*[{[]/.test(source.slice(scalar.start, scalar.start + 8))) return true;
  return source.slice(scalar.start, scalar.end).includes("\\n");
}
