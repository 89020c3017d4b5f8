/** Tier 3: the agent's own instructions from the configuration. */
export function customInstructions(
  agentName: string,
  text: string | undefined,
): string | undefined {
  const trimmed = text?.trim();
  return trimmed ? `## Agent-Specific Instructions (${agentName})\n\n${trimmed}` : undefined;
}
