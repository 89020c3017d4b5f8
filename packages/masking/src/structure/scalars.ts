import type { SourceScalar } from "../kubernetes/tree.ts";

/**
 * Writes `value` back in the style of the scalar it replaces: a block scalar keeps its header
 * and indentation (every line of the value indented alike); anything else becomes a JSON string
 * literal, which is also a valid YAML double-quoted scalar.
 */
export function encodeString(node: SourceScalar, source: string, value: string): string {
  if (node.style === "block") {
    const original = source.slice(node.start, node.end);
    const headerEnd = original.indexOf("\n");
    if (headerEnd !== -1) {
      const indent = /^[ \t]*/.exec(original.slice(headerEnd + 1))?.[0] ?? "  ";
      const body = value.replace(/\n$/, "").split("\n");
      return `${original.slice(0, headerEnd)}\n${body.map((line) => (line ? indent + line : line)).join("\n")}`;
    }
  }
  return JSON.stringify(value);
}
