/** Tier 2: per MCP server instructions, and warnings about servers that are not available. */

export function mcpServerInstructions(
  servers: readonly string[],
  instructions: ReadonlyMap<string, string>,
): string | undefined {
  const sections = servers.flatMap((server) => {
    const text = instructions.get(server)?.trim();
    return text ? [`### ${server}\n\n${text}`] : [];
  });
  return sections.length > 0 ? `## MCP Server Instructions\n\n${sections.join("\n\n")}` : undefined;
}

export function unavailableServersWarning(
  failed: Readonly<Record<string, string>>,
): string | undefined {
  const entries = Object.entries(failed);
  if (entries.length === 0) return undefined;
  const lines = entries.map(([server, reason]) => `- **${server}**: ${reason}`);
  return `## Unavailable MCP Servers

The following MCP servers failed to start for this investigation. Their tools are not available;
do not try to call them, and mention in your analysis what you could not check because of it.

${lines.join("\n")}`;
}
