import { fenceUntrusted, UNTRUSTED_DATA_RULES } from "./untrusted.ts";

/** One short summary of the whole session for people skimming the list. */
export const EXECUTIVE_SUMMARY_SYSTEM_PROMPT = `You are an expert Site Reliability Engineer writing an executive summary of an alert
investigation for on-call engineers and managers. Write 2 to 4 plain sentences: what happened,
the root cause if known, the impact, and the most important next step. No headings, no lists.

${UNTRUSTED_DATA_RULES}`;

export function executiveSummaryUserPrompt(
  finalAnalysis: string,
  labelMap?: LabelMapPrompt,
): string {
  const request = `Summarize this investigation result:

<!-- ANALYSIS_START -->
${fenceUntrusted("investigation", finalAnalysis.trim())}
<!-- ANALYSIS_END -->`;
  return labelMap ? `${request}\n\n${labelsPromptLayers(labelMap)}` : request;
}

/** The active label map as the prompt needs it. */
export interface LabelMapPrompt {
  multi: boolean;
  instructions?: string;
  labels: readonly { label: string; description: string }[];
}

const GENERIC_LABEL_MATCHER =
  "Apply the label(s) whose description best matches the investigation's conclusion. If none matches, leave the LABELS line out.";

/**
 * The labelling instructions that follow the summary request, in four layers: the fixed rule,
 * the map's own instructions (or a generic matcher), its labels in order, and the exact
 * last-line format for the map's cardinality (always last).
 */
export function labelsPromptLayers(map: LabelMapPrompt): string {
  const rule = `## Labels
Classify this session with labels taken ONLY from the list below. The investigation has already reached its conclusion: encode it, do not judge the incident again, and never invent a label. The summary lines above the labels stay facts only.`;
  const instructions = map.instructions?.trim() || GENERIC_LABEL_MATCHER;
  const list = map.labels
    .map((spec) => `- ${spec.label}: ${spec.description.trim().replace(/\n+/g, " ")}`)
    .join("\n");
  const format = map.multi
    ? `If any labels apply, end with this exact last line:
LABELS: <comma-separated unique labels from the list>
Only labels from the list. Nothing after that line.
If none apply, do not write a LABELS line.`
    : `If one label applies, end with this exact last line:
LABELS: <one label from the list, exactly as written>
Copy the label as written. Nothing after that line.
If none applies, do not write a LABELS line.`;
  return `${rule}\n\n${instructions}\n\nLabels:\n${list}\n\n${format}`;
}

/** The one reminder after a `LABELS:` line that could not be read. */
export function labelsReminder(line: string, reason: string, map: LabelMapPrompt): string {
  const names = map.labels.map((spec) => spec.label).join(", ");
  const cardinality = map.multi ? "any of these labels" : "at most one of these labels";
  return `Your last line "${line}" could not be read: ${reason}. Write the summary again, ending with a corrected LABELS line that uses ${cardinality}, exactly as written: ${names}. If none applies, leave the LABELS line out.`;
}
