import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

/**
 * The text of a tool result: every text item joined by newlines (images and other binary
 * items are skipped). A result with no text but structured content gives that content as JSON.
 */
export function extractTextContent(
  result: Pick<CallToolResult, "content" | "structuredContent">,
): string {
  const parts: string[] = [];
  for (const item of result.content ?? []) {
    if (item.type === "text") parts.push(item.text);
    else if (item.type === "resource" && "text" in item.resource) parts.push(item.resource.text);
  }
  if (parts.length === 0 && result.structuredContent !== undefined) {
    return JSON.stringify(result.structuredContent, null, 2);
  }
  return parts.join("\n");
}
