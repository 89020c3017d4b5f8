/** One short summary of the whole session for people skimming the list. */
export const EXECUTIVE_SUMMARY_SYSTEM_PROMPT = `You are an expert Site Reliability Engineer writing an executive summary of an alert
investigation for on-call engineers and managers. Write 2 to 4 plain sentences: what happened,
the root cause if known, the impact, and the most important next step. No headings, no lists.`;

export function executiveSummaryUserPrompt(finalAnalysis: string): string {
  return `Summarize this investigation result:

<!-- ANALYSIS_START -->
${finalAnalysis.trim()}
<!-- ANALYSIS_END -->`;
}
