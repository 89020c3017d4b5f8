/** Token estimation and the two independent truncations of tool results. */

/** ~4 characters per token: for thresholds, not for billing. */
export const CHARS_PER_TOKEN = 4;
/** llm_tool_call content and MCPInteraction results: protects the dashboard and the database. */
export const STORAGE_MAX_TOKENS = 8_000;
/** Input of the summarization call: a safety net for the summarizer's context window. */
export const SUMMARIZATION_MAX_TOKENS = 100_000;

export function estimateTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

export function truncateToTokens(text: string, maxTokens: number, what: string): string {
  const maxChars = maxTokens * CHARS_PER_TOKEN;
  if (text.length <= maxChars) return text;
  const omitted = estimateTokens(text.slice(maxChars));
  return `${text.slice(0, maxChars)}\n\n[TRUNCATED: ${what} cut at ${maxTokens} tokens; about ${omitted} more tokens omitted]`;
}

export function truncateForStorage(text: string): string {
  return truncateToTokens(text, STORAGE_MAX_TOKENS, "stored result");
}

export function truncateForSummarization(text: string): string {
  return truncateToTokens(text, SUMMARIZATION_MAX_TOKENS, "summarization input");
}
