/** Follow-up chat: same controllers, different prompting. */
import { fenceUntrusted } from "./untrusted.ts";

export const CHAT_INSTRUCTIONS = `## Follow-up Chat Instructions

The investigation of this alert is finished. A user now asks a follow-up question about it.

- Answer the question directly, using the investigation below as your primary source.
- Use the tools only when the question needs information the investigation does not have.
- Keep the answer focused; do not repeat the whole investigation.`;

export const INVESTIGATION_CONTEXT_START = "<!-- INVESTIGATION_CONTEXT_START -->";
export const INVESTIGATION_CONTEXT_END = "<!-- INVESTIGATION_CONTEXT_END -->";

/** The runbook section (see `runbookSection`) comes first: the same guidance as the investigation. */
export function chatUserMessage(
  investigationContext: string,
  question: string,
  runbook: string,
): string {
  return `${runbook}

## Investigation Context

${INVESTIGATION_CONTEXT_START}
${fenceUntrusted("investigation", investigationContext.trim())}
${INVESTIGATION_CONTEXT_END}

## Question

${question}`;
}
