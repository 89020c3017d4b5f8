import type { SourceEdit } from "./tree.ts";

const MASKED_LITERAL = '"[MASKED_SECRET_DATA]"';
/** `data:` / `stringData:` opening a block (YAML) or `"data": {` (pretty-printed JSON). */
const BLOCK_START = /^([ \t-]*)("?)(data|stringData)\2[ \t]*:[ \t]*(\{)?[ \t]*$/;
/** `data: {…}` / `"data": {…},` on one line. */
const INLINE_BLOCK = /^[ \t-]*("?)(?:data|stringData)\1[ \t]*:[ \t]*(\{.*\})[ \t]*,?[ \t]*$/;
const YAML_ENTRY = /^([ \t]*(?:"(?:[^"\\]|\\.)*"|'[^']*'|[^\s#:][^:]*?)[ \t]*:[ \t]+)(\S.*)$/;
const JSON_ENTRY = /^([ \t]*"(?:[^"\\]|\\.)*"[ \t]*:[ \t]*)("(?:[^"\\]|\\.)*"?|[^,\s]+)/;

/**
 * Line-based safety net for a document that mentions a Secret but does not parse (cut-off
 * JSON, broken indentation): every value under a `data:` / `stringData:` block is replaced.
 * It over-masks on purpose (a ConfigMap's data in the same broken document goes too): a broken
 * Secret must not leak just because the parser gave up.
 */
export function maskDataBlocksByLine(text: string, offset: number, edits: SourceEdit[]): number {
  let masked = 0;
  let block: { indent: number; json: boolean } | null = null;
  let cursor = 0;
  while (cursor < text.length) {
    const newline = text.indexOf("\n", cursor);
    const lineEnd = newline === -1 ? text.length : newline;
    const contentEnd = text.charCodeAt(lineEnd - 1) === 13 ? lineEnd - 1 : lineEnd;
    const line = text.slice(cursor, contentEnd);
    const lineStart = cursor;
    cursor = lineEnd + 1;

    if (block && !block.json) {
      const indent = /^[ \t]*/.exec(line)?.[0].length ?? 0;
      if (line.trim() === "" || line.trimStart().startsWith("#")) continue;
      if (indent <= block.indent) block = null;
    }
    if (!block) {
      const inline = INLINE_BLOCK.exec(line);
      if (inline?.[2] && inline[2] !== "{}") {
        const valueStart = lineStart + line.lastIndexOf(inline[2]);
        edits.push({
          start: offset + valueStart,
          end: offset + valueStart + inline[2].length,
          replacement: MASKED_LITERAL,
        });
        masked += 1;
        continue;
      }
      const start = BLOCK_START.exec(line);
      if (start) block = { indent: (start[1] ?? "").length, json: start[4] === "{" };
      continue;
    }
    if (block.json) {
      if (line.trimStart().startsWith("}")) {
        block = null;
        continue;
      }
      const entry = JSON_ENTRY.exec(line);
      if (!entry?.[1] || !entry[2]) continue;
      const valueStart = lineStart + entry[1].length;
      edits.push({
        start: offset + valueStart,
        end: offset + valueStart + entry[2].length,
        replacement: MASKED_LITERAL,
      });
      masked += 1;
      continue;
    }
    const entry = YAML_ENTRY.exec(line);
    const valueStart = lineStart + (entry?.[1]?.length ?? /^[ \t]*/.exec(line)?.[0].length ?? 0);
    if (valueStart >= lineStart + line.length) continue;
    edits.push({
      start: offset + valueStart,
      end: offset + lineStart + line.length,
      replacement: MASKED_LITERAL,
    });
    masked += 1;
  }
  return masked;
}
