import { type FormattableEvent, formatTimelineEvents } from "./timeline-format.ts";

/** One parallel agent's whole investigation, for the synthesis agent. */
export interface AgentInvestigation {
  agentName: string;
  agentIndex: number;
  strategy: string | null;
  llmProvider: string | null;
  status: string;
  errorMessage: string | null;
  events: readonly FormattableEvent[];
}

/** The parallel agents' investigations of one stage, each with its identifying metadata. */
export function formatInvestigationForSynthesis(
  agents: readonly AgentInvestigation[],
  stageName: string,
): string {
  const sections = agents.map((agent) => {
    const header = [
      `## Agent ${agent.agentIndex}: ${agent.agentName}`,
      `- Strategy: ${agent.strategy ?? "default"}`,
      `- LLM provider: ${agent.llmProvider ?? "default"}`,
      `- Status: ${agent.status}`,
      ...(agent.errorMessage ? [`- Error: ${agent.errorMessage}`] : []),
    ].join("\n");
    const body =
      agent.events.length > 0 ? formatTimelineEvents(agent.events) : "(no investigation recorded)";
    return `${header}\n\n${body}`;
  });
  return `# Parallel investigations of stage "${stageName}" (${agents.length} agents)\n\n${sections.join("\n\n---\n\n")}`;
}

/**
 * The whole session so far (investigation and earlier chat turns), from its timeline, for a
 * follow-up chat question.
 */
export function formatInvestigationContext(events: readonly FormattableEvent[]): string {
  if (events.length === 0) return "(the investigation recorded no timeline)";
  return formatTimelineEvents(events);
}
