import { ANALYSIS_REQUIREMENTS } from "./general.ts";
import { fenceUntrusted } from "./untrusted.ts";

/** Tool-less synthesis of several agents' investigations of the same alert. */
export const SYNTHESIS_INSTRUCTIONS = `## Synthesis Instructions

Several agents investigated the same alert in parallel. You receive each investigation in full.
Compare them critically: where they agree, where they disagree and which evidence is stronger.
Produce one final analysis that keeps what is well supported and says what remains uncertain.
You have no tools; work only from the investigations given to you.`;

export function synthesisTask(investigations: string): string {
  return `## Investigations to Synthesize

${fenceUntrusted("previous_stages", investigations.trim())}

## Your Task

Write the combined final analysis.

${ANALYSIS_REQUIREMENTS}`;
}
